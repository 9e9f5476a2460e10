package approve_test

import (
	"encoding/json"
	"testing"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/shell"
)

// A PreToolUse hook's allow skips asking but never beats a deny or ask
// rule, a protected path or plan mode; its ask makes an allowed call ask.
func TestApproverHookDecision(t *testing.T) {
	cwd := "/work/proj"
	deny := permission.MustParseRule("Bash(rm:*)")
	askRule := permission.MustParseRule("Bash(git push:*)")
	allow := permission.MustParseRule("Bash(npm test)")
	policy := permission.Policy{Allow: []permission.Rule{allow}, Ask: []permission.Rule{askRule}, Deny: []permission.Rule{deny}, Shell: shell.Parse}
	bash := func(c string) json.RawMessage { b, _ := json.Marshal(map[string]string{"command": c}); return b }
	tests := []struct {
		name  string
		mode  permission.Mode
		tool  string
		input json.RawMessage
		hook  string
		want  bool // allowed (no Asker: an ask is a denial)
	}{
		{name: "no hook: an unknown command asks", tool: "Bash", input: bash("make build"), want: false},
		{name: "hook allow skips the question", tool: "Bash", input: bash("make build"), hook: "allow", want: true},
		{name: "hook allow never beats a deny rule", tool: "Bash", input: bash("rm -rf build"), hook: "allow", want: false},
		{name: "hook allow never beats an ask rule", tool: "Bash", input: bash("git push origin"), hook: "allow", want: false},
		{name: "hook allow never beats a protected path", tool: "Write", input: json.RawMessage(`{"file_path":"/work/proj/.git/config","content":"x"}`), hook: "allow", want: false},
		{name: "hook allow never beats plan mode", mode: permission.ModePlan, tool: "Bash", input: bash("make build"), hook: "allow", want: false},
		{name: "hook ask turns an allow into a question", tool: "Bash", input: bash("npm test"), hook: "ask", want: false},
		{name: "allow rule without a hook", tool: "Bash", input: bash("npm test"), want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ap := &approve.Approver{Policy: policy, Cwd: cwd, Mode: tt.mode}
			v, err := ap.Approve(t.Context(), agent.Request{Tool: tt.tool, Input: tt.input, Hook: tt.hook})
			if err != nil {
				t.Fatal(err)
			}
			if v.Allow != tt.want {
				t.Errorf("Approve(%s, hook %q) = %+v; want allow %v", tt.input, tt.hook, v, tt.want)
			}
		})
	}
}
