package agenttool_test

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	coreagent "github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/agenttool"
)

// recording is a model that keeps every request it streams.
type recording struct {
	llm.Model
	mu   sync.Mutex
	reqs []llm.Request
}

func (r *recording) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Model.Stream(ctx, req)
}

// A call without subagent_type forks the caller: the fork's request is the
// parent's conversation byte for byte (system prompt, volatile part,
// tools, messages through the forking assistant message), then the
// placeholder results and the directive. The fork's own Agent call is
// refused.
func TestFork(t *testing.T) {
	m := &recording{Model: model(t, `{"turns": [
	  {"match": {"user": "fork-directive"}, "reply": {"tool_calls": [{"name": "Agent", "input": {"description": "again", "prompt": "NESTED"}}]}},
	  {"match": {"tool_result": "Agent", "user": "cannot start agents"}, "reply": {"text": "FORK-REPORT"}},
	  {"match": {"turn": 0}, "reply": {"text": "Forking.", "tool_calls": [{"name": "Echo", "input": {}}, {"name": "Agent", "input": {"description": "side task", "prompt": "DO-THE-SIDE-TASK"}}]}},
	  {"match": {"tool_result": "Agent"}, "reply": {"text": "PARENT-DONE"}}
	]}`)}
	var at *agenttool.Tool
	at = agenttool.New(agenttool.Config{Fork: true, Factory: func(context.Context, agenttool.Spec) (coreagent.Config, error) {
		t.Error("a fork call went to the factory")
		return coreagent.Config{}, nil
	}})
	tools, err := tool.NewRegistry(named("Echo"), at)
	if err != nil {
		t.Fatal(err)
	}
	parent, err := coreagent.New(coreagent.Config{Model: m, System: "PARENT-SYSTEM", Tools: tools, CompactAt: -1,
		Environment: func(context.Context) string { return "ENV" }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := parent.Run(t.Context(), "start")
	if err != nil || res.Text != "PARENT-DONE" {
		t.Fatalf("parent Run = %+v, %v", res, err)
	}
	if len(m.reqs) != 4 {
		t.Fatalf("%d requests; want 4 (parent, fork, fork, parent)", len(m.reqs))
	}
	first, fork := m.reqs[0], m.reqs[1]
	if fork.System != first.System || fork.SystemVolatile != first.SystemVolatile {
		t.Errorf("fork system = %q + %q; want the parent's %q + %q", fork.System, fork.SystemVolatile, first.System, first.SystemVolatile)
	}
	if diff := cmp.Diff(first.Tools, fork.Tools); diff != "" {
		t.Errorf("fork tools differ from the parent's (-parent +fork):\n%s", diff)
	}
	// The parent's conversation as of the fork: its first request's
	// messages plus the assistant message with the Agent call.
	parentMsgs := parent.Messages()[:2]
	a, _ := json.Marshal(parentMsgs)
	b, _ := json.Marshal(fork.Messages[:2])
	if string(a) != string(b) {
		t.Errorf("fork prefix differs from the parent's conversation:\nparent %s\nfork   %s", a, b)
	}
	last := fork.Messages[2]
	if len(last.Content) != 3 || last.Content[0].Text != coreagent.ForkPlaceholder || last.Content[1].Text != coreagent.ForkPlaceholder ||
		!strings.Contains(last.Content[2].Text, "DO-THE-SIDE-TASK") || !strings.Contains(last.Content[2].Text, "<fork-directive>") {
		t.Errorf("the fork's first message = %+v; want two placeholder results, then the directive", last.Content)
	}
	// The parent sees the fork's report; the fork was refused its own fork.
	results := parent.Messages()[2].Content
	if !strings.Contains(results[1].Text, "FORK-REPORT") {
		t.Errorf("the parent's Agent result = %q", results[1].Text)
	}
	if nested := m.reqs[2].Messages[len(m.reqs[2].Messages)-1].Content[0]; !nested.IsError || !strings.Contains(nested.Text, "a fork cannot start agents") {
		t.Errorf("the fork's own Agent call = %+v; want a refusal", nested)
	}
}

// With forks off (as in coordinator mode), a call without subagent_type
// is an ordinary general-purpose sub-agent with a fresh conversation.
func TestForkOff(t *testing.T) {
	var got agenttool.Spec
	at := agenttool.New(agenttool.Config{Factory: func(_ context.Context, s agenttool.Spec) (coreagent.Config, error) {
		got = s
		return coreagent.Config{Model: model(t, `{"turns": [{"reply": {"text": "FRESH"}}]}`), Tools: s.Tools, CompactAt: -1}, nil
	}})
	m := model(t, `{"turns": [
	  {"match": {"turn": 0}, "reply": {"tool_calls": [{"name": "Agent", "input": {"description": "d", "prompt": "p"}}]}},
	  {"match": {"tool_result": "Agent"}, "reply": {"text": "DONE"}}
	]}`)
	tools, _ := tool.NewRegistry(at)
	parent, _ := coreagent.New(coreagent.Config{Model: m, Tools: tools, CompactAt: -1})
	if _, err := parent.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if got.Type != agenttool.DefaultType {
		t.Errorf("spec type = %q; want %s", got.Type, agenttool.DefaultType)
	}
}
