package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// askScript calls AskUserQuestion once, then ends its turn.
const askScript = `{"model": "scripted-ask", "turns": [
  {"match": {"turn": 0}, "reply": {"text": "Asking.", "tool_calls": [{"id": "toolu_ask", "name": "AskUserQuestion", "input": {"questions": [
    {"question": "Which database?", "header": "Database", "multiSelect": false, "options": [
      {"label": "Postgres", "description": "a server"}, {"label": "SQLite", "description": "a file", "preview": "db, _ := sql.Open(\"sqlite\", \"app.db\")"}]}]}}]}},
  {"match": {"tool_result": "AskUserQuestion"}, "reply": {"text": "Noted."}}]}`

// Headless, AskUserQuestion asks the --permission-prompt-command (kind
// "question") and its answer reaches the model; without one, the model is
// told nobody can answer, as a result that is not an error; in plan mode
// and in bypassPermissions mode alike.
func TestHeadlessAsk(t *testing.T) {
	stdinCopy := filepath.Join(t.TempDir(), "request.json")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no person", nil, "Your questions were not answered: no person is available to answer questions in this session"},
		{"no person in plan mode", []string{"--permission-mode", "plan"}, "no person is available"},
		{"the prompt command answers", []string{"--permission-prompt-command", writeHook(t, "cat > "+stdinCopy+`; echo '{"answers":{"Which database?":"SQLite"}}'`)},
			`User has answered your questions: "Which database?"="SQLite". You can now continue with the user's answers in mind.`},
		{"the prompt command answers in bypass mode", []string{"--permission-mode", "bypassPermissions", "--permission-prompt-command", writeHook(t, `cat >/dev/null; echo '{"behavior":"allow","updatedInput":{"answers":{"Which database?":"Postgres"}}}'`)},
			`"Which database?"="Postgres"`},
		{"the prompt command declines", []string{"--permission-prompt-command", writeHook(t, `cat >/dev/null; echo '{"behavior":"deny","message":"decide yourself"}'`)},
			"Your questions were not answered: decide yourself."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			script := filepath.Join(t.TempDir(), "script.json")
			if err := os.WriteFile(script, []byte(askScript), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"-p", "--trust", "--script", script, "--output-format", "stream-json"}, tt.args...)
			out, err := headlessRun(t, dir, nil, "", append(args, "set up the app")...)
			if err != nil {
				t.Fatalf("troupe -p: %v\n%s", err, out)
			}
			res, ok := toolResult(t, out, "toolu_ask")
			if !ok {
				t.Fatalf("no tool result for the question in:\n%s", out)
			}
			if !strings.Contains(res, tt.want) {
				t.Errorf("tool result %q; want it to contain %q", res, tt.want)
			}
			if isErrorResult(t, out, "toolu_ask") {
				t.Errorf("tool result %q is an error; want a plain result", res)
			}
		})
	}
	var req map[string]any
	data, err := os.ReadFile(stdinCopy)
	if err != nil || json.Unmarshal(data, &req) != nil {
		t.Fatalf("prompt command stdin = %q, %v", data, err)
	}
	in, _ := req["input"].(map[string]any)
	qs, _ := in["questions"].([]any)
	if req["kind"] != "question" || req["tool_name"] != "AskUserQuestion" || req["tool_use_id"] != "toolu_ask" || len(qs) != 1 {
		t.Errorf("prompt command request = %s", data)
	}
}

// isErrorResult reports whether the tool_result for id is an error.
func isErrorResult(t *testing.T, out, id string) bool {
	t.Helper()
	for _, l := range streamLines(t, out) {
		msg, _ := l["message"].(map[string]any)
		blocks, _ := msg["content"].([]any)
		for _, b := range blocks {
			m, _ := b.(map[string]any)
			if m["type"] == "tool_result" && m["tool_use_id"] == id {
				e, _ := m["is_error"].(bool)
				return e
			}
		}
	}
	return false
}
