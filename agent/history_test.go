package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/llm"
)

// An agent given a History continues it: the model sees the old messages
// before the new prompt.
func TestHistoryContinued(t *testing.T) {
	m := script(t, `{"turns": [{"match": {"user": "SECOND", "turn": 2}, "reply": {"text": "continued"}}]}`)
	use := llm.ToolUse("t1", "Read", json.RawMessage(`{}`))
	history := []llm.Message{
		llm.UserText("FIRST"),
		{Role: llm.RoleAssistant, Content: []llm.Block{use}},
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult("t1", "ok", false)}},
		{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("first answer")}},
	}
	a := newAgent(t, Config{Model: m, History: history})
	history[0].Content[0].Text = "changed after New" // New keeps its own copy
	res, err := a.Run(t.Context(), "SECOND")
	if err != nil || res.Text != "continued" {
		t.Fatalf("Run = %q, %v; want the scripted answer to a request with 2 earlier assistant messages", res.Text, err)
	}
	msgs := a.Messages()
	if len(msgs) != 6 || msgs[0].Text() != "FIRST" || msgs[4].Text() != "SECOND" {
		t.Errorf("messages = %+v; want the history, the prompt and the answer", msgs)
	}
}

func TestCheckHistory(t *testing.T) {
	user, asst := llm.UserText("q"), llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("a")}}
	call := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("looking"), llm.ToolUse("t1", "Read", json.RawMessage(`{}`))}}
	result := llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult("t1", "ok", false)}}
	strange := llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult("t9", "ok", false)}}
	for _, tt := range []struct {
		name     string
		ms       []llm.Message
		complete int
		err      string // "" when valid
	}{
		{"empty", nil, 0, ""},
		{"one exchange", []llm.Message{user, asst}, 2, ""},
		{"with a tool round", []llm.Message{user, call, result, asst}, 4, ""},
		{"starts with assistant", []llm.Message{asst}, 0, `message 1: role "assistant", want user`},
		{"two users", []llm.Message{user, user}, 0, `message 2: role "user", want assistant`},
		{"ends with a user message", []llm.Message{user, asst, user}, 2, "ends with a user message"},
		{"ends with a tool use", []llm.Message{user, asst, user, call}, 2, "unanswered tool use (t1)"},
		{"unanswered in the middle", []llm.Message{user, call, user, asst}, 0, `message 3: tool use "t1" of the message before has no result`},
		{"result for no call", []llm.Message{user, asst, strange, asst}, 2, `message 3: a tool result for "t9"`},
		{"result in an assistant message", []llm.Message{user, {Role: llm.RoleAssistant, Content: result.Content}}, 0, "assistant message holds a tool result"},
		{"empty message", []llm.Message{user, {Role: llm.RoleAssistant}}, 0, "message 2 (assistant) is empty"},
	} {
		n, err := CheckHistory(tt.ms)
		if n != tt.complete {
			t.Errorf("%s: complete = %d; want %d", tt.name, n, tt.complete)
		}
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: err = %v; want %q", tt.name, err, tt.err)
		}
	}
	if _, err := New(Config{Model: script(t, `{"turns": [{"reply": {"text": "x"}}]}`), History: []llm.Message{user}}); err == nil {
		t.Error("New accepted a history that ends with an unanswered user message")
	}
}
