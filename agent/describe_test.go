package agent

import (
	"encoding/json"
	"testing"
)

// The one-line form of a tool input: its telling field, an
// AskUserQuestion's first question, nothing for what has neither.
func TestDescribeInput(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"command":"go test\n./..."}`, "go test ./..."},
		{`{"questions":[{"question":"Which database?","header":"DB"},{"question":"Who?"}]}`, "Which database?"},
		{`{"questions":[]}`, ""},
		{`{"x":1}`, ""},
	}
	for _, tt := range tests {
		if got := describeInput(json.RawMessage(tt.in)); got != tt.want {
			t.Errorf("describeInput(%s) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
