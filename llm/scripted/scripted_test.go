package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/llm"
)

const demo = `{
  "turns": [
    {"match": {"system": "researcher", "turn": 0}, "reply": {"text": "Looking for it.", "tool_calls": [{"id": "t1", "name": "Grep", "input": {"pattern": "nil"}}]}},
    {"match": {"tool_result": "Grep"}, "reply": {"text": "Found it in main.go."}},
    {"match": {"user": "ping"}, "reply": {"text": "pong"}, "repeat": true}
  ]
}`

func TestReplay(t *testing.T) {
	s, err := Parse([]byte(demo))
	if err != nil {
		t.Fatal(err)
	}
	m := New(s)
	ctx := t.Context()
	req := llm.Request{System: "You are the researcher.", Messages: []llm.Message{llm.UserText("find the bug")}}
	var text strings.Builder
	var resp *llm.Response
	for ev, err := range m.Stream(ctx, req) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == llm.EventText {
			text.WriteString(ev.Text)
		}
		if ev.Type == llm.EventDone {
			resp = ev.Response
		}
	}
	if resp == nil || text.String() != "Looking for it." || resp.StopReason != llm.StopToolUse {
		t.Fatalf("first turn: text %q, response %+v; want the scripted text and a tool_use stop", text.String(), resp)
	}
	calls := resp.Message.ToolUses()
	if len(calls) != 1 || calls[0].Name != "Grep" || string(calls[0].Input) != `{"pattern": "nil"}` {
		t.Fatalf("tool calls = %+v; want one Grep call with the scripted input", calls)
	}
	req.Messages = append(req.Messages, resp.Message, llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult("t1", "main.go:3", false)}})
	resp2, err := llm.Complete(ctx, m, req)
	if err != nil || resp2.Message.Text() != "Found it in main.go." {
		t.Fatalf("second turn = %q, %v; want the tool_result turn", resp2.Message.Text(), err)
	}
	// The used-up first turn does not answer again; the repeating one does.
	if _, err := llm.Complete(ctx, m, llm.Request{System: "researcher", Messages: []llm.Message{llm.UserText("again")}}); err == nil || !strings.Contains(err.Error(), `"again"`) {
		t.Errorf("unmatched request error = %v; want one quoting the last message", err)
	}
	for range 3 {
		if r, err := llm.Complete(ctx, m, llm.Request{Messages: []llm.Message{llm.UserText("ping")}}); err != nil || r.Message.Text() != "pong" {
			t.Fatalf("repeating turn = %q, %v", r.Message.Text(), err)
		}
	}
	if u := m.Unused(); len(u) != 0 {
		t.Errorf("Unused() = %v; want none", u)
	}
}

func TestConcurrentAgentsShareAScript(t *testing.T) {
	s, _ := Parse([]byte(`{"turns": [{"match": {"user": "go"}, "reply": {"text": "a"}}, {"match": {"user": "go"}, "reply": {"text": "b"}}]}`))
	m := New(s)
	var wg sync.WaitGroup
	got := make(chan string, 2)
	for range 2 {
		wg.Go(func() {
			r, err := llm.Complete(t.Context(), m, llm.Request{Messages: []llm.Message{llm.UserText("go")}})
			if err != nil {
				t.Error(err)
			}
			got <- r.Message.Text()
		})
	}
	wg.Wait()
	close(got)
	seen := map[string]bool{}
	for g := range got {
		seen[g] = true
	}
	if !seen["a"] || !seen["b"] {
		t.Errorf("answers = %v; want each turn used once", seen)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"syntax", "{\n  \"turns\": [\n    {\"reply\": }\n  ]\n}", "line 3"},
		{"type", `{"turns": [{"reply": {"text": 5}}]}`, "turns.reply.text must be string"},
		{"unknown field", `{"turns": [{"reply": {"txt": "x"}}]}`, `unknown field "txt"`},
		{"empty", `{"turns": []}`, "no turns"},
		{"empty reply", `{"turns": [{"reply": {}}]}`, "turns[0].reply: needs text"},
		{"unnamed tool", `{"turns": [{"reply": {"tool_calls": [{"input": {}}]}}]}`, "tool_calls[0]: name is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse(%q) error = %v; want it to mention %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestErrorsAndCancel(t *testing.T) {
	s, _ := Parse([]byte(`{"turns": [{"reply": {"error": "overloaded"}}, {"reply": {"text": "slow", "delay_ms": 60000}}]}`))
	m := New(s)
	_, err := llm.Complete(t.Context(), m, llm.Request{})
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Message != "overloaded" {
		t.Fatalf("scripted error = %v; want an *llm.APIError", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := llm.Complete(ctx, m, llm.Request{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled call = %v; want context.Canceled", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(demo))
	f.Add([]byte(`{"turns": [{"reply": {"text": "x"}}]}`))
	f.Add([]byte(`{"turns": [{"match": {"turn": 2}, "reply": {"tool_calls": [{"name": "Bash", "input": {"command": "ls"}}]}}]}`))
	f.Add([]byte(`{"turns": [{"reply": {"text": "\u00e9t\u00e9", "usage": {"input_tokens": 3}}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			return
		}
		m := New(s)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond) // bounds scripted delays
		defer cancel()
		for range len(s.Turns) + 1 {
			for _, err := range m.Stream(ctx, llm.Request{Messages: []llm.Message{llm.UserText("x")}}) {
				_ = err
			}
		}
	})
}

func TestCapture(t *testing.T) {
	s, err := Parse([]byte(`{"turns":[{"match":{"user":"shutdown"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","message":{"type":"shutdown_response","request_id":"{{capture:\"request_id\": \"([^\"]+)\"}}","approve":true}}}]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	m := New(s)
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Text(`please shutdown: {"request_id": "shutdown-17@bob"}`)}}}}
	resp, err := llm.Complete(context.Background(), m, req)
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Message struct {
			RequestID string `json:"request_id"`
		} `json:"message"`
	}
	calls := resp.Message.ToolUses()
	if len(calls) != 1 || json.Unmarshal(calls[0].Input, &in) != nil || in.Message.RequestID != "shutdown-17@bob" {
		t.Fatalf("captured input = %+v", calls)
	}
	if _, err := Parse([]byte(`{"turns":[{"reply":{"tool_calls":[{"name":"X","input":{"a":"{{capture:(}}"}}]}}]}`)); err == nil {
		t.Error("a capture that does not compile was accepted")
	}
	if _, err := Parse([]byte(`{"turns":[{"reply":{"tool_calls":[{"name":"X","input":{"a":"{{capture:abc}}"}}]}}]}`)); err == nil {
		t.Error("a capture without a group was accepted")
	}
	m = New(s)
	req.Messages[0].Content[0] = llm.Text("shutdown without an id")
	if _, err := llm.Complete(context.Background(), m, req); err == nil || !strings.Contains(err.Error(), "matched no user message") {
		t.Errorf("a capture with nothing to capture: err = %v", err)
	}
}
