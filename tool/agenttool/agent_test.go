package agenttool_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coreagent "github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/scripted"
	taskreg "github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/agenttool"
)

// named is a test tool that echoes its input.
type named string

func (n named) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: string(n), InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (named) ReadOnly(json.RawMessage) bool { return true }
func (n named) Run(_ context.Context, c tool.Call) (tool.Result, error) {
	return tool.Result{Content: string(n) + " ran"}, nil
}

// subScript: the sub-agent calls Echo once, then answers DONE-RESULT.
const subScript = `{"turns": [
  {"match": {"turn": 0}, "reply": {"text": "Working.", "tool_calls": [{"name": "Echo", "input": {}}], "usage": {"input_tokens": 10, "output_tokens": 5}}},
  {"match": {"tool_result": "Echo"}, "reply": {"text": "DONE-RESULT", "usage": {"input_tokens": 20, "output_tokens": 7}}}
]}`

// wantTokens is the latest input plus the cumulative output of subScript.
const wantTokens = "32"

func model(t *testing.T, script string) *scripted.Model {
	t.Helper()
	s, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	return scripted.New(s)
}

func registry(t *testing.T) *taskreg.Registry {
	t.Helper()
	r := taskreg.New(taskreg.Config{Dir: t.TempDir(), PollInterval: -1})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Close(ctx); err != nil {
			t.Errorf("Close = %v", err)
		}
	})
	return r
}

// setup returns an Agent tool whose sub-agents run script; specs receives
// every Spec the factory saw.
func setup(t *testing.T, reg *taskreg.Registry, script string) (*agenttool.Tool, *[]agenttool.Spec) {
	t.Helper()
	parent, err := tool.NewRegistry(named("Echo"), named("Agent"), named("TeamCreate"), named("SendMessage"), named("mcp__srv__Agent"))
	if err != nil {
		t.Fatal(err)
	}
	m := model(t, script)
	var mu sync.Mutex
	var specs []agenttool.Spec
	tl := agenttool.New(agenttool.Config{
		Tools: parent, Registry: reg, Types: []string{"general-purpose", "explorer"}, AsyncAllow: []string{"Echo", "TeamCreate"},
		Factory: func(_ context.Context, s agenttool.Spec) (coreagent.Config, error) {
			mu.Lock()
			specs = append(specs, s)
			mu.Unlock()
			return coreagent.Config{Model: m, System: "sub-agent " + s.Type, Tools: s.Tools, CompactAt: -1}, nil
		},
	})
	return tl, &specs
}

func run(t *testing.T, tl tool.Tool, input string) tool.Result {
	t.Helper()
	res, err := tl.Run(t.Context(), tool.Call{ID: "toolu_agent", Name: "Agent", Input: json.RawMessage(input)})
	if err != nil {
		t.Fatalf("Agent(%s) error = %v; want a Result", input, err)
	}
	return res
}

func TestForeground(t *testing.T) {
	tl, specs := setup(t, nil, subScript)
	res := run(t, tl, `{"description": "count things", "prompt": "count the things", "subagent_type": "explorer", "model": "haiku"}`)
	if res.IsError || !strings.HasPrefix(res.Content, "DONE-RESULT") || !strings.Contains(res.Content, "tool_uses: 1") ||
		!strings.Contains(res.Content, "total_tokens: "+wantTokens) {
		t.Errorf("foreground Agent = %+v; want DONE-RESULT with 1 tool use and %s tokens", res, wantTokens)
	}
	if len(*specs) != 1 {
		t.Fatalf("factory calls = %d; want 1", len(*specs))
	}
	s := (*specs)[0]
	if s.Type != "explorer" || s.Model != "haiku" || s.Background || s.Prompt != "count the things" || taskreg.ID(s.AgentID).TypeOf() != taskreg.LocalAgent {
		t.Errorf("spec = %+v", s)
	}
	if got, want := s.Tools.Names(), []string{"Echo", "mcp__srv__Agent"}; !slices.Equal(got, want) {
		t.Errorf("sub-agent tools = %v; want %v (no Agent, no team tools, MCP kept)", got, want)
	}
}

var idRE = regexp.MustCompile(`agentId: (a[0-9a-z]{8})`)

func TestBackground(t *testing.T) {
	reg := registry(t)
	sub := reg.Subscribe()
	defer sub.Close()
	tl, specs := setup(t, reg, subScript)
	res := run(t, tl, `{"description": "count things", "prompt": "count the things", "run_in_background": true, "name": "counter"}`)
	m := idRE.FindStringSubmatch(res.Content)
	if res.IsError || m == nil {
		t.Fatalf("background Agent = %+v; want an agent id", res)
	}
	id := taskreg.ID(m[1])
	if (*specs)[0].AgentID != string(id) || (*specs)[0].Type != agenttool.DefaultType || !(*specs)[0].Background {
		t.Errorf("spec = %+v; want agent id %s, default type, background", (*specs)[0], id)
	}
	if got, want := (*specs)[0].Tools.Names(), []string{"Echo", "mcp__srv__Agent"}; !slices.Equal(got, want) {
		t.Errorf("background sub-agent tools = %v; want %v (the async allow list after the deny list, MCP kept)", got, want)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var notes []string
	var progress []taskreg.Usage
	for len(notes) == 0 {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for the notification: %v", err)
		}
		if e.State.ID != id {
			continue
		}
		if d, ok := e.State.Detail.(*taskreg.Agent); ok && e.State.Status == taskreg.Running {
			progress = append(progress, d.Usage)
		}
		if e.Kind == taskreg.EventTerminated {
			notes = append(notes, e.Notification)
		}
	}
	for {
		e, ok := sub.TryNext()
		if !ok {
			break
		}
		if e.Kind == taskreg.EventTerminated && e.State.ID == id {
			notes = append(notes, e.Notification)
		}
	}
	if len(notes) != 1 {
		t.Fatalf("notifications = %d; want 1", len(notes))
	}
	n := notes[0]
	for _, want := range []string{"<task-id>" + string(id) + "</task-id>", "<tool-use-id>toolu_agent</tool-use-id>",
		"<task-type>local_agent</task-type>", "<status>completed</status>", `<summary>Agent "count things" finished</summary>`,
		"<result>DONE-RESULT</result>", "<total_tokens>" + wantTokens + "</total_tokens>", "<tool_uses>1</tool_uses>"} {
		if !strings.Contains(n, want) {
			t.Errorf("notification lacks %s:\n%s", want, n)
		}
	}
	if !slices.ContainsFunc(progress, func(u taskreg.Usage) bool { return u.ToolUses == 1 && u.TotalTokens == 15 }) {
		t.Errorf("progress while running = %+v; want a step with 1 tool use and 15 tokens", progress)
	}
	s, _ := reg.Get(id)
	if d := s.Detail.(*taskreg.Agent); d.Result != "DONE-RESULT" || d.AgentType != agenttool.DefaultType || len(d.Messages) == 0 {
		t.Errorf("final detail = %+v", d)
	}
	if err := tl.Send("counter", "more"); err == nil {
		t.Error("Send to a finished agent succeeded")
	}
}

func TestBackgroundStopAndSend(t *testing.T) {
	reg := registry(t)
	sub := reg.Subscribe()
	defer sub.Close()
	tl, _ := setup(t, reg, `{"turns": [{"reply": {"text": "slow", "delay_ms": 60000}}]}`)
	res := run(t, tl, `{"description": "slow one", "prompt": "take your time", "run_in_background": true, "name": "slowpoke"}`)
	m := idRE.FindStringSubmatch(res.Content)
	if m == nil {
		t.Fatalf("background Agent = %+v", res)
	}
	id := taskreg.ID(m[1])
	if got, ok := tl.Lookup("slowpoke"); !ok || got != id {
		t.Errorf("Lookup(slowpoke) = %q, %v; want %s", got, ok, id)
	}
	if err := tl.Send("slowpoke", "hurry up"); err != nil {
		t.Errorf("Send by name = %v", err)
	}
	if err := tl.Send(string(id), "really"); err != nil {
		t.Errorf("Send by id = %v", err)
	}
	if res := run(t, tl, `{"description": "again", "prompt": "x", "run_in_background": true, "name": "slowpoke"}`); !res.IsError || !strings.Contains(res.Content, "name") {
		t.Errorf("second agent with a running name = %+v; want an error naming name", res)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	s, err := reg.Stop(ctx, id)
	if err != nil || s.Status != taskreg.Killed {
		t.Fatalf("Stop = %s, %v; want killed", s.Status, err)
	}
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == taskreg.EventTerminated && e.State.ID == id {
			if e.Notification != "" {
				t.Errorf("a stopped agent notified the model: %s", e.Notification)
			}
			break
		}
	}
	if err := tl.Send("slowpoke", "late"); err == nil {
		t.Error("Send to a stopped agent succeeded")
	}
	if _, ok := tl.Lookup("slowpoke"); ok {
		t.Error("Lookup found a stopped agent")
	}
}

func TestFailure(t *testing.T) {
	reg := registry(t)
	sub := reg.Subscribe()
	defer sub.Close()
	tl, _ := setup(t, reg, `{"turns": [{"reply": {"error": "model exploded"}}]}`)
	res := run(t, tl, `{"description": "doomed", "prompt": "try"}`)
	if !res.IsError || !strings.Contains(res.Content, "model exploded") {
		t.Errorf("failing foreground Agent = %+v; want the error", res)
	}
	tl, _ = setup(t, reg, `{"turns": [{"reply": {"error": "model exploded"}}]}`)
	res = run(t, tl, `{"description": "doomed", "prompt": "try", "run_in_background": true}`)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == taskreg.EventTerminated {
			if !strings.Contains(e.Notification, "<status>failed</status>") || !strings.Contains(e.Notification, "model exploded") {
				t.Errorf("failure notification = %s", e.Notification)
			}
			break
		}
	}
}

func TestInvalidInputs(t *testing.T) {
	tl, specs := setup(t, nil, subScript)
	tests := []struct{ input, want string }{
		{`{"prompt": "x"}`, "description is required"},
		{`{"description": "d"}`, "prompt is required"},
		{`{"description": "d", "prompt": "  "}`, "prompt is required"},
		{`{"description": "d", "prompt": "x", "model": "gpt"}`, `model "gpt" is not one of`},
		{`{"description": "d", "prompt": "x", "effort": "huge"}`, `effort "huge"`},
		{`{"description": "d", "prompt": "x", "name": "bad name"}`, `name "bad name" must match`},
		{`{"description": "d", "prompt": "x", "subagent_type": "wizard"}`, `subagent_type "wizard" is unknown`},
		{`{"description": "d", "prompt": "x", "isolation": "worktree"}`, "isolation"},
		{`{"description": "d", "prompt": "x", "run_in_background": true}`, "run_in_background is not available"},
		{`{"description": "d", "prompt": "x", "color": "red"}`, `unknown field "color"`},
		{`{"description": 3, "prompt": "x"}`, `field "description" must be string`},
	}
	for _, tt := range tests {
		res := run(t, tl, tt.input)
		if !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("Agent(%s) = %+v; want an error containing %q", tt.input, res, tt.want)
		}
	}
	if len(*specs) != 0 {
		t.Errorf("invalid calls reached the factory %d times", len(*specs))
	}
	res := run(t, tl, `{"description": "d", "prompt": "x", "team_name": "ignored", "mode": "plan"}`)
	if res.IsError {
		t.Errorf("team fields should be ignored: %+v", res)
	}
	unknown := agenttool.New(agenttool.Config{Factory: func(context.Context, agenttool.Spec) (coreagent.Config, error) {
		return coreagent.Config{}, errors.Join(agenttool.ErrUnknownType, errors.New("no such agent definition"))
	}})
	if res := run(t, unknown, `{"description": "d", "prompt": "x", "subagent_type": "ghost"}`); !res.IsError || !strings.Contains(res.Content, `subagent_type "ghost"`) {
		t.Errorf("factory refusing the type = %+v; want an error naming subagent_type", res)
	}
	if !json.Valid(tl.Spec().InputSchema) {
		t.Errorf("schema is not JSON: %s", tl.Spec().InputSchema)
	}
}

// TestInAgentLoop runs the Agent tool from a lead agent's loop, one
// scripted model serving both agents (routed by system prompt).
func TestInAgentLoop(t *testing.T) {
	m := model(t, `{"turns": [
  {"match": {"system": "lead", "turn": 0}, "reply": {"tool_calls": [{"name": "Agent", "input": {"description": "delegate", "prompt": "do the echo"}}]}},
  {"match": {"system": "sub-agent", "turn": 0}, "reply": {"tool_calls": [{"name": "Echo", "input": {}}]}},
  {"match": {"system": "sub-agent", "tool_result": "Echo"}, "reply": {"text": "SUB-DONE"}},
  {"match": {"system": "lead", "tool_result": "Agent"}, "reply": {"text": "lead saw it"}}
]}`)
	core, _ := tool.NewRegistry(named("Echo"))
	at := agenttool.New(agenttool.Config{Tools: core, Factory: func(_ context.Context, s agenttool.Spec) (coreagent.Config, error) {
		return coreagent.Config{Model: m, System: "sub-agent", Tools: s.Tools, CompactAt: -1}, nil
	}})
	tools, err := tool.NewRegistry(named("Echo"), at)
	if err != nil {
		t.Fatal(err)
	}
	lead, err := coreagent.New(coreagent.Config{Model: m, System: "lead", Tools: tools, CompactAt: -1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := lead.Run(t.Context(), "go")
	if err != nil || res.Text != "lead saw it" {
		t.Fatalf("lead Run = %+v, %v", res, err)
	}
	msgs := lead.Messages()
	var toolResult string
	for _, b := range msgs[2].Content {
		if b.Type == llm.BlockToolResult {
			toolResult = b.Text
		}
	}
	if !strings.HasPrefix(toolResult, "SUB-DONE") || !strings.Contains(toolResult, "tool_uses: 1") {
		t.Errorf("the lead got %q from Agent; want SUB-DONE with its usage", toolResult)
	}
}

// Without a configured list, background sub-agents get only the tools of
// AsyncAllowed (MCP tools aside); foreground ones get every tool not denied.
func TestAsyncAllowedByDefault(t *testing.T) {
	reg := registry(t)
	parent, _ := tool.NewRegistry(named("Read"), named("Bash"), named("Echo"), named("mcp__srv__x"))
	m := model(t, subScript)
	seen := make(chan agenttool.Spec, 2)
	tl := agenttool.New(agenttool.Config{Tools: parent, Registry: reg,
		Factory: func(_ context.Context, s agenttool.Spec) (coreagent.Config, error) {
			seen <- s
			return coreagent.Config{Model: m, System: "sub-agent", Tools: s.Tools, CompactAt: -1}, nil
		}})
	run(t, tl, `{"description": "bg", "prompt": "count the things", "run_in_background": true}`)
	if got, want := (<-seen).Tools.Names(), []string{"Read", "Bash", "mcp__srv__x"}; !slices.Equal(got, want) {
		t.Errorf("background tools = %v; want %v", got, want)
	}
}
