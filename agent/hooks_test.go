package agent

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// hookFunc is a Hooks that records the events it sees.
type hookFunc struct {
	mu     sync.Mutex
	events []HookEvent
	f      func(HookEvent) HookResult
}

func (h *hookFunc) Hook(_ context.Context, e HookEvent) HookResult {
	h.mu.Lock()
	h.events = append(h.events, e)
	h.mu.Unlock()
	return h.f(e)
}

func (h *hookFunc) names() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, e := range h.events {
		out = append(out, e.Name)
	}
	return strings.Join(out, " ")
}

func echoTool(ran *[]string) *fakeTool {
	return &fakeTool{name: "Echo", run: func(_ context.Context, c tool.Call) (tool.Result, error) {
		*ran = append(*ran, string(c.Input))
		if strings.Contains(string(c.Input), "fail") {
			return tool.Errorf("it failed"), nil
		}
		return tool.Result{Content: "echo " + string(c.Input)}, nil
	}}
}

const echoScript = `{"turns": [
 {"match": {"turn": 0}, "reply": {"tool_calls": [{"id": "e1", "name": "Echo", "input": {"x": 1}}]}},
 {"match": {"turn": 1}, "reply": {"text": "first answer"}},
 {"match": {"user": "Stop hook feedback"}, "reply": {"text": "second answer"}}]}`

func TestHooksEventsAndResults(t *testing.T) {
	tests := []struct {
		name    string
		f       func(HookEvent) HookResult
		ran     string // the inputs the tool ran with
		result  string // in the tool result
		stop    llm.StopReason
		text    string
		names   string
		blocked bool
	}{
		{name: "nothing decided", f: func(HookEvent) HookResult { return HookResult{} }, ran: `{"x": 1}`, result: `echo {"x": 1}`,
			stop: llm.StopEndTurn, text: "first answer", names: "UserPromptSubmit PreToolUse PostToolUse Stop"},
		{name: "PreToolUse blocks", f: func(e HookEvent) HookResult {
			return HookResult{Block: e.Name == HookPreToolUse, Reason: "no echo"}
		}, result: "Blocked by a PreToolUse hook: no echo", stop: llm.StopEndTurn, text: "first answer", blocked: true,
			names: "UserPromptSubmit PreToolUse Stop"},
		{name: "PreToolUse rewrites", f: func(e HookEvent) HookResult {
			if e.Name == HookPreToolUse {
				return HookResult{UpdatedInput: json.RawMessage(`{"x":2}`)}
			}
			return HookResult{}
		}, ran: `{"x":2}`, result: `echo {"x":2}`, stop: llm.StopEndTurn, text: "first answer"},
		{name: "PostToolUse feedback and context", f: func(e HookEvent) HookResult {
			if e.Name == HookPostToolUse {
				return HookResult{Block: true, Reason: "lint failed", Context: "see lint.log"}
			}
			return HookResult{}
		}, ran: `{"x": 1}`, result: "PostToolUse hook feedback:\nlint failed\n\nsee lint.log", stop: llm.StopEndTurn, text: "first answer"},
		{name: "Stop sends it back once", f: func(e HookEvent) HookResult {
			return HookResult{Block: e.Name == HookStop && !e.StopHookActive, Reason: "tests first"}
		}, ran: `{"x": 1}`, stop: llm.StopEndTurn, text: "second answer", names: "UserPromptSubmit PreToolUse PostToolUse Stop Stop"},
		{name: "continue false halts after the tool round", f: func(e HookEvent) HookResult {
			return HookResult{Halt: e.Name == HookPostToolUse, HaltReason: "budget spent"}
		}, ran: `{"x": 1}`, stop: StopHookHalted, text: "budget spent", names: "UserPromptSubmit PreToolUse PostToolUse"},
		{name: "UserPromptSubmit blocks", f: func(e HookEvent) HookResult {
			return HookResult{Block: e.Name == HookUserPromptSubmit, Reason: "no secrets"}
		}, stop: StopHookBlocked, text: "no secrets", names: "UserPromptSubmit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran []string
			h := &hookFunc{f: tt.f}
			a := newAgent(t, Config{Model: script(t, echoScript), Hooks: h}, echoTool(&ran))
			res, err := a.Run(t.Context(), "go")
			if err != nil {
				t.Fatal(err)
			}
			if res.StopReason != tt.stop || res.Text != tt.text {
				t.Errorf("Run() = %q, %q; want %q, %q", res.StopReason, res.Text, tt.stop, tt.text)
			}
			if got := strings.Join(ran, "|"); got != tt.ran {
				t.Errorf("tool ran with %q; want %q", got, tt.ran)
			}
			msgs := a.Messages()
			wellFormed(t, msgs)
			if tt.result != "" {
				got := msgs[2].Content[0]
				if !strings.Contains(got.Text, tt.result) || got.IsError != tt.blocked {
					t.Errorf("tool result %+v; want %q (error %v)", got, tt.result, tt.blocked)
				}
			}
			if tt.names != "" && h.names() != tt.names {
				t.Errorf("events %q; want %q", h.names(), tt.names)
			}
			if tt.stop == StopHookBlocked && len(msgs) != 0 {
				t.Errorf("a blocked prompt was kept: %+v", msgs)
			}
		})
	}
}

func TestHooksFailureEventAndPromptContext(t *testing.T) {
	var ran []string
	h := &hookFunc{f: func(e HookEvent) HookResult {
		if e.Name == HookUserPromptSubmit {
			return HookResult{Context: "house rule: be brief"}
		}
		return HookResult{}
	}}
	m := script(t, `{"turns": [
 {"match": {"user": "house rule: be brief", "turn": 0}, "reply": {"tool_calls": [{"id": "e1", "name": "Echo", "input": {"fail": true}}]}},
 {"match": {"turn": 1}, "reply": {"text": "ok"}}]}`)
	a := newAgent(t, Config{Model: m, Hooks: h}, echoTool(&ran))
	if _, err := a.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if got, want := h.names(), "UserPromptSubmit PreToolUse PostToolUseFailure Stop"; got != want {
		t.Errorf("events %q; want %q", got, want)
	}
	h.mu.Lock()
	post := h.events[2]
	h.mu.Unlock()
	if post.Result.Content != "it failed" || !post.Result.IsError || post.Tool != "Echo" {
		t.Errorf("PostToolUseFailure event %+v; want the tool's error result", post)
	}
}

func TestHooksPermissionReachesApprover(t *testing.T) {
	var got string
	ap := approverFunc(func(_ context.Context, r Request) (Verdict, error) {
		got = r.Hook
		return Verdict{Allow: true}, nil
	})
	h := &hookFunc{f: func(e HookEvent) HookResult { return HookResult{Permission: "allow"} }}
	var ran []string
	a := newAgent(t, Config{Model: script(t, echoScript), Hooks: h, Approver: ap}, echoTool(&ran))
	if _, err := a.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if got != "allow" {
		t.Errorf("Request.Hook = %q; want allow", got)
	}
}

func TestHooksPreCompact(t *testing.T) {
	m := script(t, `{"turns": [
	  {"match": {"user": "one"}, "reply": {"text": "1", "usage": {"input_tokens": 900, "output_tokens": 200}}},
	  {"match": {"user": "Summarize the conversation"}, "reply": {"text": "SUMMARY: said one"}},
	  {"match": {"user": "SUMMARY: said one"}, "reply": {"text": "2"}}]}`)
	h := &hookFunc{f: func(HookEvent) HookResult { return HookResult{} }}
	a := newAgent(t, Config{Model: m, CompactAt: 1000, KeepRecent: 1, Hooks: h})
	for _, p := range []string{"one", "two"} {
		if _, err := a.Run(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var triggers []string
	for _, e := range h.events {
		if e.Name == HookPreCompact {
			triggers = append(triggers, e.Trigger)
		}
	}
	if strings.Join(triggers, ",") != "auto" {
		t.Errorf("PreCompact triggers %q; want one auto", triggers)
	}
}
