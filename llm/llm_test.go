package llm

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"testing"
)

func TestMessageHelpers(t *testing.T) {
	m := Message{Role: RoleAssistant, Content: []Block{
		Text("a"), ToolUse("t1", "Read", json.RawMessage(`{}`)), Text("b"), {Type: BlockThinking, Text: "hmm"},
	}}
	if got := m.Text(); got != "ab" {
		t.Errorf("Text() = %q; want %q", got, "ab")
	}
	if uses := m.ToolUses(); len(uses) != 1 || uses[0].ToolUseID != "t1" || uses[0].Name != "Read" {
		t.Errorf("ToolUses() = %+v; want the one Read call", uses)
	}
	b, err := json.Marshal(ToolResult("t1", "boom", true))
	if err != nil || !strings.Contains(string(b), `"is_error":true`) || !strings.Contains(string(b), `"tool_use_id":"t1"`) {
		t.Errorf("ToolResult JSON = %s, %v", b, err)
	}
}

func TestUsage(t *testing.T) {
	u := Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: 100, CacheWriteTokens: 20}.Add(Usage{InputTokens: 1, OutputTokens: 2, CacheReadTokens: 3, CacheWriteTokens: 4})
	if u != (Usage{11, 7, 103, 24}) {
		t.Errorf("Add = %+v", u)
	}
	if got := u.TotalInput(); got != 11+103+24 {
		t.Errorf("TotalInput() = %d; want %d", got, 11+103+24)
	}
}

func TestAPIErrorRetryable(t *testing.T) {
	tests := []struct {
		err  APIError
		want bool
	}{
		{APIError{Status: 429}, true},
		{APIError{Status: 529}, true},
		{APIError{Status: 500}, true},
		{APIError{Status: 400, Type: "invalid_request_error"}, false},
		{APIError{Status: 401}, false},
		{APIError{Type: "overloaded_error"}, true},
	}
	for _, tt := range tests {
		if got := tt.err.Retryable(); got != tt.want {
			t.Errorf("%+v.Retryable() = %v; want %v", tt.err, got, tt.want)
		}
	}
	e := &APIError{Provider: "anthropic", Status: 529, Type: "overloaded_error", Message: "busy", RequestID: "req_1"}
	if s := e.Error(); !strings.Contains(s, "overloaded_error") || !strings.Contains(s, "529") || !strings.Contains(s, "req_1") {
		t.Errorf("Error() = %q; want type, status and request id", s)
	}
}

type seqModel func(yield func(Event, error) bool)

func (s seqModel) Stream(context.Context, Request) iter.Seq2[Event, error] {
	return iter.Seq2[Event, error](s)
}
func (seqModel) Info() Info { return Info{Provider: "test"} }

func TestComplete(t *testing.T) {
	done := &Response{StopReason: StopEndTurn, Message: Message{Role: RoleAssistant, Content: []Block{Text("hi")}}}
	ok := seqModel(func(yield func(Event, error) bool) {
		if yield(Event{Type: EventText, Text: "hi"}, nil) {
			yield(Event{Type: EventDone, Response: done}, nil)
		}
	})
	if r, err := Complete(t.Context(), ok, Request{}); err != nil || r.Message.Text() != "hi" {
		t.Errorf("Complete = %+v, %v", r, err)
	}
	short := seqModel(func(yield func(Event, error) bool) { yield(Event{Type: EventText, Text: "h"}, nil) })
	if _, err := Complete(t.Context(), short, Request{}); !errors.Is(err, ErrNoResponse) {
		t.Errorf("Complete on a stream without done = %v; want ErrNoResponse", err)
	}
	boom := errors.New("boom")
	failing := seqModel(func(yield func(Event, error) bool) { yield(Event{}, boom) })
	if _, err := Complete(t.Context(), failing, Request{}); !errors.Is(err, boom) {
		t.Errorf("Complete on a failing stream = %v; want its error", err)
	}
}
