package anthropic

import (
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/llmtest"
)

func newModel(t *testing.T, srv *llmtest.AnthropicServer, edit func(*Options)) *Model {
	t.Helper()
	opts := Options{APIKey: "test-key", BaseURL: srv.URL, RetryBaseDelay: time.Millisecond, RetryMaxDelay: time.Second}
	if edit != nil {
		edit(&opts)
	}
	m, err := New(opts)
	if err != nil {
		t.Fatalf("New() error: %v", err)
	}
	return m
}

// collect drains seq, bounded by a deadline so that a hang fails the test.
func collect(t *testing.T, seq iter.Seq2[llm.Event, error]) ([]llm.Event, error) {
	t.Helper()
	type result struct {
		evs []llm.Event
		err error
	}
	ch := make(chan result, 1)
	go func() {
		var r result
		for ev, err := range seq {
			if err != nil {
				r.err = err
				break
			}
			r.evs = append(r.evs, ev)
		}
		ch <- r
	}()
	select {
	case r := <-ch:
		return r.evs, r.err
	case <-time.After(10 * time.Second):
		t.Fatal("stream did not end within 10s")
		return nil, nil
	}
}

// ofType returns the events of type typ.
func ofType(evs []llm.Event, typ llm.EventType) []llm.Event {
	var out []llm.Event
	for _, ev := range evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// texts returns the Text of evs.
func texts(evs []llm.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Text)
	}
	return out
}

// done returns the response of the last event, failing if it is not
// EventDone.
func done(t *testing.T, evs []llm.Event) llm.Response {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].Type != llm.EventDone || evs[len(evs)-1].Response == nil {
		t.Fatalf("last event is not EventDone with a response; events: %+v", evs)
	}
	return *evs[len(evs)-1].Response
}

func hello() llm.Request {
	return llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
}

func TestNewWithoutKey(t *testing.T) {
	_, err := New(Options{BaseURL: "http://127.0.0.1:1"})
	if !errors.Is(err, llm.ErrNoCredentials) {
		t.Fatalf("New(no key) error = %v; want ErrNoCredentials", err)
	}
	if !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("New(no key) error = %q; want it to name ANTHROPIC_API_KEY", err)
	}
}

func TestStreamText(t *testing.T) {
	usage := llmtest.AnthropicUsage{InputTokens: 12, OutputTokens: 7, CacheReadInputTokens: 300, CacheCreationInputTokens: 40}
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(
		llmtest.AnthropicText("Hel", "lo, ", "wor", "ld").WithUsage(usage),
	))
	m := newModel(t, srv, nil)
	evs, err := collect(t, m.Stream(t.Context(), hello()))
	if err != nil {
		t.Fatalf("Stream() error: %v", err)
	}
	if got, want := texts(ofType(evs, llm.EventText)), []string{"Hel", "lo, ", "wor", "ld"}; !cmp.Equal(got, want) {
		t.Errorf("text deltas = %q; want %q", got, want)
	}
	for _, ev := range ofType(evs, llm.EventText) {
		if ev.Index != 0 {
			t.Errorf("text delta index = %d; want 0", ev.Index)
		}
	}
	if n := len(ofType(evs, llm.EventBlockStop)); n != 1 {
		t.Errorf("got %d EventBlockStop; want 1", n)
	}
	resp := done(t, evs)
	want := llm.Response{
		ID:         "msg_fake_1",
		Model:      DefaultModel,
		Message:    llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("Hello, world")}},
		StopReason: llm.StopEndTurn,
		Usage:      llm.Usage{InputTokens: 12, OutputTokens: 7, CacheReadTokens: 300, CacheWriteTokens: 40},
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response mismatch (-want +got):\n%s", diff)
	}

	req := srv.LastRequest()
	if !req.Stream || req.Model != DefaultModel || req.MaxTokens != DefaultMaxTokens {
		t.Errorf("request stream=%v model=%q max_tokens=%d; want true %q %d", req.Stream, req.Model, req.MaxTokens, DefaultModel, DefaultMaxTokens)
	}
	if got := req.APIKey(); got != "test-key" {
		t.Errorf("API key = %q; want test-key", got)
	}
	if req.Thinking != nil || req.Temperature != nil {
		t.Errorf("request thinking=%+v temperature=%v; want both absent", req.Thinking, req.Temperature)
	}
}

func TestComplete(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, nil)
	m := newModel(t, srv, nil)
	temp := 0.25
	resp, err := llm.Complete(t.Context(), m, llm.Request{
		Model: "claude-opus-5-5", MaxTokens: 100, StopSequences: []string{"STOP"}, Temperature: &temp,
		Messages: []llm.Message{llm.UserText("hi")},
	})
	if err != nil {
		t.Fatalf("Complete() error: %v", err)
	}
	if got := resp.Message.Text(); got != "ok" {
		t.Errorf("Complete() text = %q; want ok", got)
	}
	req := srv.LastRequest()
	if req.Model != "claude-opus-5-5" || req.MaxTokens != 100 || !cmp.Equal(req.StopSequences, []string{"STOP"}) {
		t.Errorf("request model=%q max_tokens=%d stop=%q; want claude-opus-5-5 100 [STOP]", req.Model, req.MaxTokens, req.StopSequences)
	}
	if req.Temperature == nil || *req.Temperature != temp {
		t.Errorf("request temperature = %v; want %v", req.Temperature, temp)
	}
}

func TestToolRoundTrip(t *testing.T) {
	input := `{"path":"dir/ä.go","lines":[1,2,3],"note":"x\"y"}`
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(
		llmtest.AnthropicContent(llmtest.AnthropicTextBlock("Reading."), llmtest.AnthropicToolUseBlock("toolu_1", "read", input)),
		llmtest.AnthropicText("done"),
	))
	m := newModel(t, srv, nil)
	tools := []llm.ToolSpec{{Name: "read", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}}
	req := llm.Request{System: "You are terse.", Tools: tools, Messages: []llm.Message{llm.UserText("read it")}}

	evs, err := collect(t, m.Stream(t.Context(), req))
	if err != nil {
		t.Fatalf("Stream() error: %v", err)
	}
	starts := ofType(evs, llm.EventToolStart)
	if len(starts) != 1 || starts[0].Index != 1 || starts[0].Block.ToolUseID != "toolu_1" || starts[0].Block.Name != "read" {
		t.Fatalf("EventToolStart = %+v; want one for toolu_1 read at index 1", starts)
	}
	chunks := texts(ofType(evs, llm.EventToolInput))
	if len(chunks) < 2 || strings.Join(chunks, "") != input {
		t.Errorf("tool input deltas = %q; want several that join to %s", chunks, input)
	}
	resp := done(t, evs)
	if resp.StopReason != llm.StopToolUse {
		t.Errorf("stop reason = %q; want tool_use", resp.StopReason)
	}
	uses := resp.Message.ToolUses()
	if len(uses) != 1 || string(uses[0].Input) != input {
		t.Fatalf("tool uses = %+v; want one with input %s", uses, input)
	}

	// The follow-up carries the assistant turn and an error result.
	req.Messages = append(req.Messages, resp.Message, llm.Message{Role: llm.RoleUser, Content: []llm.Block{
		llm.ToolResult("toolu_1", "no such file", true),
	}})
	if _, err := collect(t, m.Stream(t.Context(), req)); err != nil {
		t.Fatalf("Stream(follow-up) error: %v", err)
	}
	got := srv.LastRequest()
	if len(got.Messages) != 3 {
		t.Fatalf("follow-up has %d messages; want 3", len(got.Messages))
	}
	asst := got.Messages[1]
	if asst.Role != "assistant" || len(asst.Content) != 2 || asst.Content[1].Type != "tool_use" {
		t.Fatalf("assistant message = %+v; want text then tool_use", asst)
	}
	if use := asst.Content[1]; use.ID != "toolu_1" || use.Name != "read" || !jsonEqual(use.Input, input) {
		t.Errorf("sent tool_use = id %q name %q input %s; want toolu_1 read %s", use.ID, use.Name, use.Input, input)
	}
	res := got.Messages[2].Content[0]
	if res.Type != "tool_result" || res.ToolUseID != "toolu_1" || !res.IsError || res.Text != "no such file" {
		t.Errorf("sent tool_result = %+v; want toolu_1, is_error, %q", res, "no such file")
	}
	if len(got.Tools) != 1 || !jsonEqual(got.Tools[0].InputSchema, string(tools[0].InputSchema)) || got.Tools[0].Description != "Read a file." {
		t.Errorf("sent tools = %+v; want the spec verbatim", got.Tools)
	}
	if len(got.System) != 1 || got.System[0].Text != "You are terse." {
		t.Errorf("sent system = %+v; want one text block", got.System)
	}
}

func jsonEqual(a json.RawMessage, b string) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return cmp.Equal(x, y)
}

func TestThinkingRoundTrip(t *testing.T) {
	thinking := llmtest.AnthropicThinkingBlock("Let me think about it.", "sig-abc==")
	thinking.Deltas = []string{"Let me ", "think about it."}
	srv := llmtest.NewAnthropicServer(t, nil)
	srv2 := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(
		llmtest.AnthropicContent(thinking, llmtest.AnthropicRedactedThinkingBlock("ZW5jcnlwdGVk"), llmtest.AnthropicTextBlock("42")),
		llmtest.AnthropicText("ok"),
	))
	m := newModel(t, srv2, nil)
	req := llm.Request{ThinkingBudget: 2048, Messages: []llm.Message{llm.UserText("why?")}}
	evs, err := collect(t, m.Stream(t.Context(), req))
	if err != nil {
		t.Fatalf("Stream() error: %v", err)
	}
	if got, want := texts(ofType(evs, llm.EventThinking)), []string{"Let me ", "think about it."}; !cmp.Equal(got, want) {
		t.Errorf("thinking deltas = %q; want %q", got, want)
	}
	resp := done(t, evs)
	wantBlocks := []llm.Block{
		{Type: llm.BlockThinking, Text: "Let me think about it.", Signature: "sig-abc=="},
		{Type: llm.BlockRedactedThinking, Data: "ZW5jcnlwdGVk"},
		llm.Text("42"),
	}
	if diff := cmp.Diff(wantBlocks, resp.Message.Content); diff != "" {
		t.Errorf("response blocks mismatch (-want +got):\n%s", diff)
	}
	if th := srv2.LastRequest().Thinking; th == nil || th.Type != "adaptive" {
		t.Errorf("thinking config for %s = %+v; want adaptive", DefaultModel, th)
	}

	req.Messages = append(req.Messages, resp.Message, llm.UserText("and?"))
	if _, err := collect(t, m.Stream(t.Context(), req)); err != nil {
		t.Fatalf("Stream(follow-up) error: %v", err)
	}
	sent := srv2.LastRequest().Messages[1].Content
	if len(sent) != 3 || sent[0].Type != "thinking" || sent[0].Thinking != "Let me think about it." || sent[0].Signature != "sig-abc==" ||
		sent[1].Type != "redacted_thinking" || sent[1].Data != "ZW5jcnlwdGVk" {
		t.Errorf("sent assistant blocks = %+v; want thinking with signature, redacted thinking, text", sent)
	}

	// A model that takes a budget gets one, below max_tokens.
	legacy := newModel(t, srv, func(o *Options) { o.Model = "claude-haiku-4-5"; o.MaxTokens = 1000 })
	if _, err := collect(t, legacy.Stream(t.Context(), llm.Request{ThinkingBudget: 2048, Messages: []llm.Message{llm.UserText("x")}})); err != nil {
		t.Fatalf("Stream(haiku 4.5) error: %v", err)
	}
	got := srv.LastRequest()
	if got.Thinking == nil || got.Thinking.Type != "enabled" || got.Thinking.BudgetTokens != 2048 || got.MaxTokens <= 2048 {
		t.Errorf("haiku 4.5 thinking = %+v max_tokens %d; want enabled, budget 2048 < max_tokens", got.Thinking, got.MaxTokens)
	}
}

func TestCacheBreakpoints(t *testing.T) {
	conversation := []llm.Message{
		llm.UserText("read a.go"),
		{Role: llm.RoleAssistant, Content: []llm.Block{
			{Type: llm.BlockThinking, Text: "hm", Signature: "s"},
			llm.ToolUse("toolu_1", "read", json.RawMessage(`{"path":"a.go"}`)),
		}},
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult("toolu_1", "package a", false), llm.Text("")}},
	}
	tools := []llm.ToolSpec{
		{Name: "read", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "write", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
	tests := []struct {
		name string
		req  llm.Request
		want []string
	}{
		{"all three", llm.Request{System: "sys", Tools: tools, Messages: conversation},
			[]string{"tools[1]", "system[0]", "messages[2].content[0]"}},
		{"no cache", llm.Request{System: "sys", Tools: tools, Messages: conversation, NoCache: true}, nil},
		{"no system or tools", llm.Request{Messages: conversation[:1]}, []string{"messages[0].content[0]"}},
		{"assistant last, thinking skipped", llm.Request{Messages: []llm.Message{
			llm.UserText("go"),
			{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("prefill"), {Type: llm.BlockThinking, Text: "t", Signature: "s"}}},
		}}, []string{"messages[1].content[0]"}},
	}
	srv := llmtest.NewAnthropicServer(t, nil)
	m := newModel(t, srv, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := collect(t, m.Stream(t.Context(), tt.req)); err != nil {
				t.Fatalf("Stream() error: %v", err)
			}
			req := srv.LastRequest()
			if diff := cmp.Diff(tt.want, req.CacheBreakpoints()); diff != "" {
				t.Errorf("cache breakpoints mismatch (-want +got):\n%s", diff)
			}
			for _, b := range req.System {
				if b.CacheControl != nil && b.CacheControl.Type != "ephemeral" {
					t.Errorf("system cache_control = %+v; want ephemeral", b.CacheControl)
				}
			}
		})
	}
}

func TestSystemRoleMessage(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, nil)
	m := newModel(t, srv, nil)
	req := llm.Request{Messages: []llm.Message{
		llm.UserText("hi"),
		{Role: "system", Content: []llm.Block{llm.Text("<env>linux</env>")}},
	}}
	if _, err := collect(t, m.Stream(t.Context(), req)); err != nil {
		t.Fatalf("Stream() error: %v", err)
	}
	got := srv.LastRequest().LastMessage()
	if got.Role != "system" || len(got.Content) != 1 || got.Content[0].Text != "<env>linux</env>" {
		t.Errorf("last message = %+v; want the system message", got)
	}
	if bp := srv.LastRequest().CacheBreakpoints(); !cmp.Equal(bp, []string{"messages[0].content[0]"}) {
		t.Errorf("cache breakpoints = %q; want the last user block", bp)
	}
}

func TestBadRequest(t *testing.T) {
	tests := []struct {
		name string
		req  llm.Request
	}{
		{"unknown role", llm.Request{Messages: []llm.Message{{Role: "tool", Content: []llm.Block{llm.Text("x")}}}}},
		{"unknown block", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: "image"}}}}}},
		{"tool input", llm.Request{Messages: []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse("t", "n", json.RawMessage(`{`))}}}}},
		{"tool schema", llm.Request{Tools: []llm.ToolSpec{{Name: "n", InputSchema: json.RawMessage(`[`)}}, Messages: []llm.Message{llm.UserText("x")}}},
	}
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript())
	m := newModel(t, srv, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := collect(t, m.Stream(t.Context(), tt.req)); err == nil {
				t.Errorf("Stream() error = nil; want an error")
			}
		})
	}
	if n := srv.RequestCount(); n != 0 {
		t.Errorf("server got %d requests; want 0", n)
	}
}

func TestStopEarly(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, nil)
	m := newModel(t, srv, nil)
	for ev, err := range m.Stream(t.Context(), hello()) {
		if err != nil {
			t.Fatalf("Stream() error: %v", err)
		}
		if ev.Type == llm.EventText {
			break // the iterator must stop cleanly and close the body
		}
	}
}

func TestConcurrent(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, nil)
	m := newModel(t, srv, nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			resp, err := llm.Complete(t.Context(), m, hello())
			if err != nil || resp.Message.Text() != "ok" {
				t.Errorf("Complete() = %q, %v; want ok", resp.Message.Text(), err)
			}
		})
	}
	wg.Wait()
	if n := srv.RequestCount(); n != 8 {
		t.Errorf("server got %d requests; want 8", n)
	}
}

func TestIgnoresEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "env-key")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "env-token")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-From-Env: 1")
	srv := llmtest.NewAnthropicServer(t, nil)
	m := newModel(t, srv, nil)
	if _, err := collect(t, m.Stream(t.Context(), hello())); err != nil {
		t.Fatalf("Stream() error: %v", err)
	}
	req := srv.LastRequest()
	if got := req.APIKey(); got != "test-key" {
		t.Errorf("API key = %q; want the one from Options", got)
	}
	if got := req.Header.Get("X-From-Env"); got != "" {
		t.Errorf("X-From-Env = %q; want no header from the environment", got)
	}
}
