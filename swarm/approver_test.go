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
