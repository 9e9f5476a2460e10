package swarm

import (
	"encoding/json"
	"testing"
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
