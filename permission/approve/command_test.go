package approve

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The prompt command through a real shell: the request on its stdin, its
// answer read back; every way it can fail is an error that says which.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	req := AskRequest{Tool: "Bash", Input: json.RawMessage(`{"command":"ls"}`), ToolUseID: "toolu_1", Cwd: dir, Reason: "Bash needs approval"}
	for _, tt := range []struct {
		name, shell string
		allow       bool
		msg, input  string
		err         string
	}{
		{name: "allow, reading the request", shell: `grep -q '"tool_name":"Bash"' && echo '{"behavior":"allow"}'`, allow: true},
		{name: "deny with a message", shell: `echo '{"behavior":"deny","message":"not today"}'`, msg: "not today"},
		{name: "deny without one", shell: `echo '{"behavior":"deny"}'`, msg: "denied by the permission prompt command"},
		{name: "Claude Code's updatedInput", shell: `echo '{"behavior":"allow","updatedInput":{"command":"ls -a"}}'`, allow: true, input: `{"command":"ls -a"}`},
		{name: "runs in the agent's folder", shell: `[ "$(pwd)" = "` + dir + `" ] && echo '{"behavior":"allow"}'`, allow: true},
		{name: "fails", shell: `echo boom >&2; exit 3`, err: "failed: exit status 3: boom"},
		{name: "not JSON", shell: `echo yes`, err: "printed no valid answer"},
		{name: "two answers", shell: `echo '{"behavior":"allow"}{"behavior":"deny"}'`, err: "more than one JSON value"},
		{name: "unknown behavior", shell: `echo '{"behavior":"maybe"}'`, err: `answered behavior "maybe"`},
		{name: "bad rule", shell: `echo '{"behavior":"allow","always":true,"rule":"Bash("}'`, err: `answered rule "Bash("`},
		{name: "too slow", shell: `sleep 5`, err: "timed out after 300ms"},
	} {
		c := &Command{Shell: tt.shell, Timeout: 300 * time.Millisecond}
		ans, err := c.Ask(context.Background(), req)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err = %v; want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if ans.Allow != tt.allow || ans.Message != tt.msg || string(ans.UpdatedInput) != tt.input {
			t.Errorf("%s: answer %+v; want allow %v, message %q, input %s", tt.name, ans, tt.allow, tt.msg, tt.input)
		}
	}
}
