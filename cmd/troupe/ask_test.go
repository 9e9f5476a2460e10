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

// A headless lead's --permission-prompt-command answers a teammate's
// question (kind "question", naming the teammate), and the teammate's
// model gets the answer; with no prompt command, the teammate is told
// nobody can answer.
func TestHeadlessTeammateAsk(t *testing.T) {
	for _, withCommand := range []bool{true, false} {
		dir := t.TempDir()
		cwd := filepath.Join(dir, "work")
		if err := os.MkdirAll(cwd, 0o755); err != nil {
			t.Fatal(err)
		}
		script := filepath.Join(dir, "script.json")
		writeFile(t, script, `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"asks"}},
   {"name":"Agent","input":{"description":"asker","name":"ann","prompt":"ask"}}]}},
 {"match":{"system":"teammate ann","turn":0},"reply":{"tool_calls":[{"name":"AskUserQuestion","input":`+askInput+`}]}},
 {"match":{"system":"teammate ann","tool_result":"AskUserQuestion","user":"=\"Bob\""},"reply":{"tool_calls":[{"name":"Bash","input":{"command":"touch got-bob"}}]}},
 {"match":{"system":"teammate ann","tool_result":"AskUserQuestion","user":"no person is available"},"reply":{"tool_calls":[{"name":"Bash","input":{"command":"touch got-nobody"}}]}},
 {"match":{"system":"teammate ann"},"reply":{"text":"ANN-DONE"},"repeat":true},
 {"match":{"system":"You are troupe,"},"reply":{"text":"ok"},"repeat":true}
]}`)
		reqFile := filepath.Join(dir, "request.json")
		args := []string{"-p", "--trust", "--agent-teams", "--explicit-teams", "--teammate-mode", "in-process", "--home", filepath.Join(dir, "home"),
			"--cwd", cwd, "--provider", "scripted", "--script", script, "--allowedTools", "Bash(touch:*)"}
		want := "got-nobody"
		if withCommand {
			prompt := `cat > ` + reqFile + `; echo '{"answers":{"Which database?":"Postgres","Who reviews?":"Bob"}}'`
			args = append(args, "--permission-prompt-command", prompt)
			want = "got-bob"
		}
		var out, errOut strings.Builder
		m := &Main{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
		if err := m.Run(t.Context(), append(args, "go")); err != nil {
			t.Fatalf("%v\n%s\n%s", err, out.String(), errOut.String())
		}
		if _, err := os.Stat(filepath.Join(cwd, want)); err != nil {
			t.Errorf("with command %v: the teammate did not get the expected result (%s missing)\n%s", withCommand, want, errOut.String())
		}
		if withCommand {
			if b, err := os.ReadFile(reqFile); err != nil || !strings.Contains(string(b), `"kind":"question"`) || !strings.Contains(string(b), `"agent":"ann"`) {
				t.Errorf("the prompt command's request: %s %v; want a question naming ann", b, err)
			}
		}
	}
}
