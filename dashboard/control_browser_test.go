package dashboard_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/dashboard"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/tool"
)

// touchTool creates a file: a call that is not read-only, so the default
// permission mode asks before it runs.
type touchTool struct{}

func (touchTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "Touch", Description: "create an empty file", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
}
func (touchTool) ReadOnly(json.RawMessage) bool { return false }
func (touchTool) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	var in struct{ Path string }
	if err := json.Unmarshal(c.Input, &in); err != nil {
		return tool.Errorf("bad input: %v", err), nil
	}
	if err := os.WriteFile(in.Path, nil, 0o644); err != nil {
		return tool.Errorf("%v", err), nil
	}
	return tool.Result{Content: "created " + in.Path}, nil
}

// TestBrowserControl answers a real teammate's permission request from the
// page: the teammate (a swarm.Teammate running here, asking through the
// mailbox as a teammate in its own pane does) waits until "Allow once" is
// clicked, then its call runs. The page also sends a message as the lead.
func TestBrowserControl(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, dashboard.Config{Control: true})
	ran := filepath.Join(t.TempDir(), "ran")
	input, _ := json.Marshal(map[string]string{"path": ran})
	script, err := json.Marshal(scripted.Script{Turns: []scripted.Turn{
		{Match: scripted.Match{User: "make the file"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "Touch", Input: input}}}},
		{Match: scripted.Match{ToolResult: "Touch"}, Reply: scripted.Reply{Text: "done"}},
		{Reply: scripted.Reply{Text: "ok"}, Repeat: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := scripted.Parse(script)
	if err != nil {
		t.Fatal(err)
	}
	model := scripted.New(s)
	tm, err := swarm.NewTeammate(swarm.TeammateConfig{Team: "alpha", Name: "alice", Color: "blue",
		Teams: f.other.Teams(), Mail: f.other.Mail(), Tasks: f.other.Tasks(), Prompt: "make the file",
		NoAutoClaim: true, AskTimeout: 30 * time.Second,
		Build: func(tm *swarm.Teammate) (agent.Config, error) {
			reg, err := tool.NewRegistry(touchTool{})
			if err != nil {
				return agent.Config{}, err
			}
			appr := &approve.Approver{Cwd: f.root, Mode: permission.ModeDefault, Asker: approve.AskerFunc(tm.Ask)}
			return agent.Config{Model: model, System: "You are alice.", Tools: reg, Approver: appr}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = tm.Run(runCtx) })
	t.Cleanup(func() { stop(); wg.Wait() })
	shots := t.TempDir()

	run(t, ctx, "open the team page", 10*time.Second,
		chromedp.Navigate(f.srv.URL+"/team/alpha"),
		chromedp.WaitVisible(`#members`),
	)
	until(t, ctx, "the request is pending", `document.querySelector('#pending button[data-act="allow"]') !== null`, 10*time.Second)
	screenshot(t, ctx, shots, "permission")
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the call ran before it was allowed")
	}
	run(t, ctx, "allow once", 5*time.Second, chromedp.Click(`#pending button[data-act="allow"]`))
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(ran); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the teammate's call did not run within 10 s of the answer")
		}
		time.Sleep(10 * time.Millisecond)
	}
	until(t, ctx, "the verdict is in the timeline", `document.getElementById('timeline').textContent.includes("team-lead allowed alice's Touch call") && document.getElementById('pending') === null`, 5*time.Second)

	// Send a message as the lead from the page.
	run(t, ctx, "send a message", 5*time.Second,
		chromedp.SetValue(`#send-to`, "bob"),
		chromedp.SendKeys(`#send-text`, "please review"),
		chromedp.Click(`#send-button`),
	)
	until(t, ctx, "the send is confirmed", `document.getElementById('control-status').textContent === 'sent to bob'`, 5*time.Second)
	inbox, err := f.other.Mail().Read(t.Context(), "alpha", "bob", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(inbox) != 1 || inbox[0].Text != "please review" || inbox[0].From != "team-lead" {
		t.Fatalf("bob's inbox = %+v; want the one message from team-lead", inbox)
	}
	screenshot(t, ctx, shots, "control")
}
