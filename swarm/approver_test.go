package swarm

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/shell"
)

func TestApproverPlanModeAndRules(t *testing.T) {
	dir := t.TempDir()
	a := NewApprover(&approve.Approver{Policy: permission.Policy{Shell: shell.Parse}, Cwd: dir, Mode: permission.ModePlan})
	ctx := context.Background()
	check := func(tool, input string, want bool) {
		t.Helper()
		v, err := a.Approve(ctx, agent.Request{Tool: tool, Input: json.RawMessage(input)})
		if err != nil {
			t.Fatal(err)
		}
		if v.Allow != want {
			t.Errorf("%s %s in %s: allow = %v, want %v (%s)", tool, input, a.Mode(), v.Allow, want, v.Reason)
		}
	}
	check("SendMessage", `{"to":"team-lead","message":"plan"}`, true)
	check("ExitPlanMode", `{"plan":"do it"}`, true)
	check("Write", `{"file_path":"`+dir+`/a.go","content":"x"}`, false)
	check("TaskUpdate", `{"taskId":"1","status":"completed"}`, false)
	if err := a.SetMode("acceptEdits"); err != nil {
		t.Fatal(err)
	}
	check("Write", `{"file_path":"`+dir+`/a.go","content":"x"}`, true)
	check("TaskUpdate", `{"taskId":"1","status":"completed"}`, true)
	check("Bash", `{"command":"make build"}`, false)
	if err := a.AddAllowRules([]string{"Bash(make build)", "Bash("}); err == nil {
		t.Error("a rule that does not parse was accepted silently")
	}
	check("Bash", `{"command":"make build"}`, true)
	check("Bash", `{"command":"make build; rm -rf /"}`, false)
	if err := a.SetMode("nonsense"); err == nil {
		t.Error("an unknown mode was accepted")
	}
	// Changes while decisions run: no race, every decision sees one state.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 50 {
				if i%2 == 0 {
					_ = a.AddAllowRules([]string{"Read"})
				} else {
					_, _ = a.Approve(ctx, agent.Request{Tool: "Bash", Input: json.RawMessage(`{"command":"make build"}`)})
				}
			}
		})
	}
	wg.Wait()
}

// A teammate started in bypassPermissions under a bypassPermissions lead
// is judged in default once the lead is switched to default, at the next
// call and without a SetMode of its own; concurrent switches are safe.
func TestApproverCeilingFollowsTheLead(t *testing.T) {
	var mu sync.Mutex
	lead := permission.ModeBypass
	a := NewApprover(&approve.Approver{Policy: permission.Policy{Shell: shell.Parse}, Cwd: t.TempDir(), Mode: permission.ModeBypass})
	a.SetCeiling(func() permission.Mode { mu.Lock(); defer mu.Unlock(); return lead })
	call := agent.Request{Tool: "Bash", Input: json.RawMessage(`{"command":"touch /tmp/written-by-a-teammate"}`)}
	if v, err := a.Approve(context.Background(), call); err != nil || !v.Allow {
		t.Fatalf("under a bypassPermissions lead: %+v, %v; want allowed", v, err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { mu.Lock(); lead = permission.ModeDefault; mu.Unlock() })
	wg.Go(func() { _, _ = a.Approve(context.Background(), call) })
	wg.Wait()
	if v, err := a.Approve(context.Background(), call); err != nil || v.Allow {
		t.Fatalf("after the lead went to default: %+v, %v; want refused (no one to ask)", v, err)
	}
	if m := a.Mode(); m != permission.ModeDefault {
		t.Errorf("Mode() = %s; want default, the mode calls are judged in", m)
	}
	// The ceiling narrows, never widens: a plan-mode teammate stays in plan.
	p := NewApprover(&approve.Approver{Policy: permission.Policy{Shell: shell.Parse}, Cwd: t.TempDir(), Mode: permission.ModePlan})
	p.SetCeiling(func() permission.Mode { return permission.ModeBypass })
	if v, _ := p.Approve(context.Background(), call); v.Allow {
		t.Errorf("a plan-mode teammate under a bypassPermissions lead ran a write: %+v", v)
	}
}
