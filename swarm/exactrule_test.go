package swarm

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/permission/approve"
)

// The rule "allow always" falls back to covers the call exactly: the
// model's '*' and ':*' never become wildcards, and a call no rule can
// name gets none (it is then allowed once).
func TestExactRule(t *testing.T) {
	tests := []struct{ tool, input, want string }{
		{"Bash", `{"command":"go test ./..."}`, "Bash(go test ./...)"},
		{"Bash", `{"command":"python3 *"}`, ""},
		{"Bash", `{"command":"git log :*"}`, ""},
		{"Bash", `{"command":"a && b"}`, ""},
		{"Edit", `{"file_path":"/w/*.go"}`, "Edit(//w/[*].go)"},
		{"Edit", `{"file_path":"rel.go"}`, ""},
		{"WebSearch", `{"query":"x"}`, "WebSearch"},
	}
	for _, tt := range tests {
		if got := ExactRule(tt.tool, json.RawMessage(tt.input)); got != tt.want {
			t.Errorf("ExactRule(%s, %s) = %q; want %q", tt.tool, tt.input, got, tt.want)
		}
	}
}

// "Allow always" on a teammate's `python3 *` (a glob no rule can name)
// allows that call once and adds no rule, so python3 evil.py asks again.
func TestAlwaysGlobAddsNoRule(t *testing.T) {
	var mu sync.Mutex
	asked := 0
	h := newHarness(t, script(`{"match":{},"reply":{"text":"ok"},"repeat":true}`), func(c *LeadConfig) {
		c.Answer = func(ctx context.Context, a PermissionAsk) (PermissionAnswer, error) {
			mu.Lock()
			defer mu.Unlock()
			asked++
			return PermissionAnswer{Allow: true, Always: asked == 1}, nil
		}
	})
	var added []string
	h.mateCfg = func(c *TeammateConfig) {
		c.AddAllowRules = func(r []string) { mu.Lock(); added = append(added, r...); mu.Unlock() }
		c.AskTimeout = 2 * time.Second
	}
	h.create("glob")
	h.spawn("gina", "stand by")
	h.waitFor("gina runs", func() bool { h.mu.Lock(); defer h.mu.Unlock(); return h.mates["gina"] != nil })
	h.mu.Lock()
	tm := h.mates["gina"]
	h.mu.Unlock()
	for _, cmd := range []string{"python3 *", "python3 evil.py"} {
		ans, err := tm.Ask(context.Background(), approve.AskRequest{Tool: "Bash", ToolUseID: "toolu_1", Input: []byte(fmt.Sprintf(`{"command":%q}`, cmd)), Reason: "runs a command"})
		if err != nil || !ans.Allow {
			t.Fatalf("Ask(%q) = %+v, %v; want allowed", cmd, ans, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(added) != 0 || asked != 2 {
		t.Errorf("rules added %q, lead asked %d times; want none added and python3 evil.py asked too", added, asked)
	}
}
