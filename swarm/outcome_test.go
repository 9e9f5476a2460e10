package swarm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
)

// poke is a tool that changes something, so that every call of it asks.
type poke struct{}

func (poke) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "Poke", InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (poke) ReadOnly(json.RawMessage) bool { return false }
func (poke) Run(context.Context, tool.Call) (tool.Result, error) {
	return tool.Result{Content: "poked"}, nil
}

// An idle notification says how the run ended, as the seed's type has it:
// resolved (a task completed), blocked (a call refused, or the task it
// works on waits for another), failed (the run ended in an error), and the
// lead's digest groups them, the ones that need it first.
func TestIdleOutcome(t *testing.T) {
	h := newHarness(t, script(
		`{"match":{"system":"teammate res","turn":0},"reply":{"tool_calls":[{"name":"TaskUpdate","input":{"taskId":"1","status":"completed"}}]}}`,
		`{"match":{"system":"teammate res"},"reply":{"text":"done"}}`,
		`{"match":{"system":"teammate wait","turn":0},"reply":{"tool_calls":[{"name":"TaskUpdate","input":{"taskId":"3","owner":"wait","status":"in_progress"}}]}}`,
		`{"match":{"system":"teammate wait"},"reply":{"text":"task 3 needs task 2 first"}}`,
		`{"match":{"system":"teammate den","turn":0},"reply":{"tool_calls":[{"name":"Poke","input":{}}]}}`,
		`{"match":{"system":"teammate den"},"reply":{"text":"I could not poke"}}`,
		`{"match":{"system":"teammate bad"},"reply":{"error":"the model server is down"}}`,
		`{"match":{"system":"teammate idle"},"reply":{"text":"nothing to do"}}`,
	), func(c *LeadConfig) {
		c.Answer = func(context.Context, PermissionAsk) (PermissionAnswer, error) {
			return PermissionAnswer{Allow: false, Message: "not on this machine"}, nil
		}
	})
	h.tools = func(*Teammate, team.Member) []tool.Tool { return []tool.Tool{poke{}} }
	cfg := h.create("outcome")
	l := tasklist.New(h.store.Tasks(), cfg.Name)
	ctx := context.Background()
	for _, d := range []tasklist.Draft{
		{Subject: "one", Owner: "res"},
		{Subject: "two", Owner: "someone"},
		{Subject: "three", BlockedBy: []string{"2"}},
	} {
		if _, err := l.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	names := []string{"res", "wait", "den", "bad", "idle"}
	for _, n := range names {
		h.spawn(n, "work")
	}
	h.waitFor("five idle notifications", func() bool {
		h.lead.mu.Lock()
		defer h.lead.mu.Unlock()
		return len(h.lead.digest) == len(names)
	})
	h.lead.mu.Lock()
	got := map[string]mailbox.IdleNotification{}
	for _, n := range h.lead.digest {
		got[n.From] = n
	}
	h.lead.mu.Unlock()
	for _, c := range []struct{ name, task, status, why string }{
		{"res", "1", mailbox.CompletedResolved, ""},
		{"wait", "3", mailbox.CompletedBlocked, "task #3 waits for #2"},
		{"den", "", mailbox.CompletedBlocked, "permission refused for Poke: not on this machine"},
		{"bad", "", mailbox.CompletedFailed, "the model server is down"},
		{"idle", "", "", ""},
	} {
		n := got[c.name]
		if n.CompletedTaskID != c.task || n.CompletedStatus != c.status || !strings.Contains(n.FailureReason, c.why) {
			t.Errorf("%s: task %q status %q reason %q; want task %q status %q reason with %q",
				c.name, n.CompletedTaskID, n.CompletedStatus, n.FailureReason, c.task, c.status, c.why)
		}
	}
	d := h.lead.TakeDigest()
	order := []string{"failed:", "- bad is idle (failed: ", "blocked:", "- den is idle; blocked: permission refused for Poke",
		"- wait is idle; blocked on task #3: task #3 waits for #2", "resolved:", "- res is idle; completed task #1", "idle:", "- idle is idle"}
	at := 0
	for _, want := range order {
		i := strings.Index(d[at:], want)
		if i < 0 {
			t.Fatalf("digest lacks %q after position %d (groups in order: failed, blocked, resolved, idle):\n%s", want, at, d)
		}
		at += i + len(want)
	}
}

// An approved plan takes the teammate out of plan mode in its member entry
// too: the team file says the mode it works in now, not plan.
func TestPlanApprovalRecordsTheMode(t *testing.T) {
	h := newHarness(t, script(
		`{"match":{"system":"teammate pia","turn":0},"reply":{"text":"ready"}}`,
		`{"match":{"system":"teammate pia","user":"[Plan Approved]"},"reply":{"text":"PLAN-APPROVED-SEEN"}}`,
	), nil)
	h.mateCfg = func(c *TeammateConfig) { c.PlanMode = true }
	cfg := h.create("planned")
	h.spawn("pia", "stand by")
	h.waitFor("pia idle", func() bool { return h.hasEvent("pia", EventIdle, "") })
	if _, err := team.UpdateMember(context.Background(), h.store.Teams(), cfg.Name, "pia", func(m *team.Member) error {
		m.Mode = "plan" // as a plan-mode teammate's entry says
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	tm := h.mates["pia"]
	h.mu.Unlock()
	tm.mu.Lock()
	tm.plan = "plan-1" // as ExitPlanMode leaves it
	tm.mu.Unlock()
	h.send(cfg.Name, team.LeadName, "pia", mailbox.PlanApprovalResponse{RequestID: "plan-1", Approved: true, PermissionMode: "acceptEdits"})
	h.waitFor("the approval seen by the model", func() bool { return h.reported("PLAN-APPROVED-SEEN") })
	if m, _ := h.member(cfg.Name, "pia"); m.Mode != "acceptEdits" {
		t.Errorf("member mode after the approval = %q; want acceptEdits", m.Mode)
	}
}

// TeamPath reads back exactly the folder rules TeamRules writes, and
// nothing wider or stranger.
func TestTeamPath(t *testing.T) {
	for _, p := range []team.AllowedPath{{Path: "/work/src", ToolName: "Edit"}, {Path: "/a", ToolName: "Read"}} {
		rules := TeamRules([]team.AllowedPath{p})
		if len(rules) != 1 {
			t.Fatalf("TeamRules(%v) = %v", p, rules)
		}
		got, ok := TeamPath(rules[0])
		if !ok || got != p {
			t.Errorf("TeamPath(%q) = %v, %v; want %v", rules[0], got, ok, p)
		}
	}
	for _, r := range []string{"Edit", "Edit(/rel/**)", "Edit(//a/b)", "Bash(//a/**)", "Edit(//**)", "Edit(//a/*/**)", "Edit(//a/../b/**)", "Write(//a/**)"} {
		if p, ok := TeamPath(r); ok {
			t.Errorf("TeamPath(%q) = %v; want no path", r, p)
		}
	}
}

// "Allow always" for a folder on a file tool goes into the team file's
// teamAllowedPaths, once, naming who asked; an exact rule does not.
func TestAlwaysFolderRuleSharedInTheTeamFile(t *testing.T) {
	rule := "Edit(//work/src/**)"
	h := newHarness(t, script(`{"match":{},"reply":{"text":"ok"},"repeat":true}`), func(c *LeadConfig) {
		c.Answer = func(_ context.Context, a PermissionAsk) (PermissionAnswer, error) {
			if strings.Contains(string(a.Input), "exact") {
				return PermissionAnswer{Allow: true, Always: true, Rule: "Edit(/work/exact.go)"}, nil
			}
			return PermissionAnswer{Allow: true, Always: true, Rule: rule}, nil
		}
	})
	cfg := h.create("paths")
	ctx := context.Background()
	for i, in := range []string{`{"file_path":"/work/src/a.go"}`, `{"file_path":"/work/src/b.go"}`, `{"file_path":"/work/exact.go"}`} {
		ask := PermissionAsk{Worker: "w" + string(rune('0'+i)), Tool: "Edit", Input: json.RawMessage(in)}
		if _, _, err := h.lead.decide(ctx, ask); err != nil {
			t.Fatal(err)
		}
	}
	c, err := h.store.Teams().Get(ctx, cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.TeamAllowedPaths) != 1 {
		t.Fatalf("teamAllowedPaths = %+v; want one entry for %s", c.TeamAllowedPaths, rule)
	}
	if p := c.TeamAllowedPaths[0]; p.Path != "/work/src" || p.ToolName != "Edit" || p.AddedBy != "w0" || p.AddedAt == 0 {
		t.Errorf("teamAllowedPaths[0] = %+v; want /work/src for Edit added by w0 with a time", p)
	}
}
