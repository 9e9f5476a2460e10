package inbox_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/mem"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/inbox"
)

type fixture struct {
	st    *mem.Store
	team  string
	tools map[string]tool.Tool
	shut  []string
}

func setup(t *testing.T) *fixture {
	t.Helper()
	st := mem.New(mem.Options{})
	t.Cleanup(func() { st.Close() })
	cfg, err := team.Create(t.Context(), st.Teams(), team.CreateOptions{Name: "crew", Pick: func(n int) int { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := team.AddMember(t.Context(), st.Teams(), cfg.Name, team.Member{Name: "codex", BackendType: "mcp"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, team: cfg.Name, tools: map[string]tool.Tool{}}
	for _, tl := range inbox.Tools(inbox.Config{Teams: st.Teams(), Mail: st.Mail(), Tasks: st.Tasks(), Team: cfg.Name, Name: "codex",
		OnShutdownRequest: func(id string) { f.shut = append(f.shut, id) }}) {
		f.tools[tl.Spec().Name] = tl
	}
	return f
}

func (f *fixture) run(t *testing.T, ctx context.Context, name, input string) tool.Result {
	t.Helper()
	res, err := f.tools[name].Run(ctx, tool.Call{Name: name, Input: json.RawMessage(input)})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func (f *fixture) send(t *testing.T, from, to, text string) {
	t.Helper()
	if _, err := f.st.Mail().Send(t.Context(), f.team, to, mailbox.Message{From: from, Text: text}); err != nil {
		t.Fatal(err)
	}
}

func TestReadInbox(t *testing.T) {
	f := setup(t)
	if res := f.run(t, t.Context(), "ReadInbox", `{}`); res.Content != "No unread messages." {
		t.Errorf("empty ReadInbox = %q", res.Content)
	}
	f.send(t, team.LeadName, "codex", "hello")
	f.send(t, team.LeadName, "codex", `{"type":"shutdown_request","requestId":"r1","from":"team-lead"}`)
	res := f.run(t, t.Context(), "ReadInbox", `{}`)
	if !strings.Contains(res.Content, "hello") || !strings.Contains(res.Content, `kind="shutdown_request"`) {
		t.Errorf("ReadInbox = %q; want both messages", res.Content)
	}
	if len(f.shut) != 1 || f.shut[0] != "r1" {
		t.Errorf("shutdown requests seen = %q; want [r1]", f.shut)
	}
	if res := f.run(t, t.Context(), "ReadInbox", `{}`); res.Content != "No unread messages." {
		t.Errorf("second ReadInbox = %q; want them marked read", res.Content)
	}
	if res := f.run(t, t.Context(), "ReadInbox", `{"x":1}`); !res.IsError {
		t.Errorf("ReadInbox with an unknown field = %+v; want an error result", res)
	}
}

func TestTeamMembers(t *testing.T) {
	f := setup(t)
	res := f.run(t, t.Context(), "TeamMembers", `{}`)
	if !strings.Contains(res.Content, "codex (codex@crew, mcp, active)") || !strings.Contains(res.Content, "team-lead") {
		t.Errorf("TeamMembers = %q", res.Content)
	}
}

// TestWaitForWork: idle once, woken by a message, by a claimable task,
// and a timeout on virtual time.
func TestWaitForWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := setup(t)
		done := make(chan tool.Result)
		go func() { done <- f.run(t, t.Context(), "WaitForWork", `{"timeout_seconds": 60}`) }()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		f.send(t, team.LeadName, "codex", "wake up")
		if res := <-done; !strings.Contains(res.Content, "wake up") {
			t.Errorf("WaitForWork = %q; want the message", res.Content)
		}
		lead, _ := f.st.Mail().Read(t.Context(), f.team, team.LeadName, false)
		if len(lead) != 1 || !strings.Contains(lead[0].Text, "idle_notification") {
			t.Errorf("lead's inbox = %+v; want one idle notification", lead)
		}

		go func() { done <- f.run(t, t.Context(), "WaitForWork", `{}`) }()
		time.Sleep(3 * time.Second)
		if _, err := tasklist.New(f.st.Tasks(), f.team).Create(t.Context(), tasklist.Draft{Subject: "build"}); err != nil {
			t.Fatal(err)
		}
		if res := <-done; !strings.Contains(res.Content, "#1 build") {
			t.Errorf("WaitForWork = %q; want the claimable task", res.Content)
		}
		if _, err := tasklist.New(f.st.Tasks(), f.team).ClaimTask(t.Context(), "1", "codex"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		res := f.run(t, t.Context(), "WaitForWork", `{"timeout_seconds": 30}`)
		if !strings.Contains(res.Content, "Nothing arrived") || time.Since(start) != 30*time.Second {
			t.Errorf("WaitForWork = %q after %v; want a timeout after 30s", res.Content, time.Since(start))
		}
		lead, _ = f.st.Mail().Read(t.Context(), f.team, team.LeadName, false)
		if len(lead) != 3 {
			t.Errorf("lead got %d messages; want one idle notification per idle stretch (3)", len(lead))
		}
		if res := f.run(t, t.Context(), "WaitForWork", `{"timeout_seconds": 99999}`); !res.IsError {
			t.Errorf("WaitForWork(99999) = %+v; want an error result", res)
		}
	})
}
