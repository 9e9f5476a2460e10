package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// TestAttach: Config.Attach's text ends the run's first user message and
// the tool results' message; an empty text adds no block.
func TestAttach(t *testing.T) {
	m := script(t, `{"turns": [
	  {"match": {"turn": 0, "user": "NOTE-1"}, "reply": {"text": "reading", "tool_calls": [{"name": "Echo", "input": {}}]}},
	  {"match": {"tool_result": "Echo", "user": "NOTE-2"}, "reply": {"text": "done"}},
	  {"match": {"user": "again"}, "reply": {"text": "ok"}}]}`)
	echo := &fakeTool{name: "Echo", ro: true, run: func(context.Context, tool.Call) (tool.Result, error) {
		return tool.Result{Content: "echoed"}, nil
	}}
	n := 0
	attach := func() string {
		n++
		if n > 2 {
			return ""
		}
		return "NOTE-" + string(rune('0'+n))
	}
	a := newAgent(t, Config{Model: m, Attach: attach}, echo)
	res, err := a.Run(t.Context(), "go")
	if err != nil || res.Text != "done" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	msgs := a.Messages()
	last := func(m llm.Message) string { return m.Content[len(m.Content)-1].Text }
	if msgs[0].Content[0].Text != "go" || last(msgs[0]) != "NOTE-1" || !strings.Contains(last(msgs[2]), "NOTE-2") {
		t.Errorf("messages %+v", msgs)
	}
	if _, err := a.Run(t.Context(), "again"); err != nil {
		t.Fatal(err)
	}
	if got := a.Messages()[4]; got.Content[0].Text != "again" || len(got.Content) != 1 {
		t.Errorf("an empty attachment added a block: %+v", got.Content)
	}
}
