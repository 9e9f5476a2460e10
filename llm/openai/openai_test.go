package openai_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/llmtest"
	"github.com/troupe-dev/troupe/llm/openai"
)

const testKey = "sk-test"

// newModel returns a Model talking to s with fast retries; mods adjust the
// options.
func newModel(t *testing.T, s *llmtest.OpenAIServer, mods ...func(*openai.Options)) *openai.Model {
	t.Helper()
	opts := openai.Options{
		APIKey:        testKey,
		BaseURL:       s.URL,
		Model:         "gpt-test",
		RetryDelay:    time.Millisecond,
		MaxRetryDelay: time.Second,
	}
	for _, mod := range mods {
		mod(&opts)
	}
	m, err := openai.New(opts)
	if err != nil {
		t.Fatalf("New(%+v) error: %v", opts, err)
	}
	return m
}

// run drains a stream, returning its events (EventDone's response
// separately) and its error.
func run(t *testing.T, ctx context.Context, m llm.Model, req llm.Request) ([]llm.Event, *llm.Response, error) {
	t.Helper()
	var evs []llm.Event
	for ev, err := range m.Stream(ctx, req) {
		if err != nil {
			return evs, nil, err
		}
		if ev.Type == llm.EventDone {
			return evs, ev.Response, nil
		}
		evs = append(evs, ev)
	}
	t.Fatal("stream ended without EventDone or an error")
	return nil, nil, nil
}

func types(evs []llm.Event) []llm.EventType {
	var out []llm.EventType
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

func hello() llm.Request {
	return llm.Request{System: "Be brief.", Messages: []llm.Message{llm.UserText("Say hello.")}}
}

func TestStreamText(t *testing.T) {
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(llmtest.OpenAIText("Hello, world!")))
	s.RequireKey(testKey)
	m := newModel(t, s)

	evs, resp, err := run(t, t.Context(), m, hello())
	if err != nil {
		t.Fatalf("Stream error: %v", err)
	}
	var text strings.Builder
	deltas := 0
	for _, ev := range evs {
		if ev.Type == llm.EventText {
			text.WriteString(ev.Text)
			deltas++
			if ev.Index != 0 {
				t.Errorf("text event index = %d; want 0", ev.Index)
			}
		}
	}
	if text.String() != "Hello, world!" || deltas < 2 {
		t.Errorf("text deltas = %q in %d events; want Hello, world! in several", text.String(), deltas)
	}
	if last := evs[len(evs)-1]; last.Type != llm.EventBlockStop || last.Index != 0 {
		t.Errorf("last event before done = %+v; want block_stop 0", last)
	}
	want := &llm.Response{
		ID:         "chatcmpl-0",
		Model:      "gpt-test",
		Message:    llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("Hello, world!")}},
		StopReason: llm.StopEndTurn,
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response mismatch (-want +got):\n%s", diff)
	}

	req := s.Request(0)
	if req.Authorization != "Bearer "+testKey || req.Path != "/v1/chat/completions" {
		t.Errorf("request auth, path = %q, %q; want Bearer %s, /v1/chat/completions", req.Authorization, req.Path, testKey)
	}
	if !req.Stream || !req.IncludeUsage() || req.Model != "gpt-test" {
		t.Errorf("request stream, include_usage, model = %v, %v, %q; want true, true, gpt-test", req.Stream, req.IncludeUsage(), req.Model)
	}
	wantMsgs := []llmtest.OpenAIMessage{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Say hello."}}
	if diff := cmp.Diff(wantMsgs, req.Messages); diff != "" {
		t.Errorf("request messages mismatch (-want +got):\n%s", diff)
	}
}

func TestRequestOptions(t *testing.T) {
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(llmtest.OpenAIText("a"), llmtest.OpenAIText("b")))
	m := newModel(t, s, func(o *openai.Options) { o.MaxTokens = 1000 })
	temp := 0.25
	req := hello()
	req.Model, req.Temperature, req.StopSequences = "other-model", &temp, []string{"END"}
	if _, _, err := run(t, t.Context(), m, req); err != nil {
		t.Fatalf("Stream error: %v", err)
	}
	req = hello()
	req.MaxTokens = 50
	if _, _, err := run(t, t.Context(), m, req); err != nil {
		t.Fatalf("Stream error: %v", err)
	}
	r0, r1 := s.Request(0), s.Request(1)
	if r0.Model != "other-model" || r0.Temperature == nil || *r0.Temperature != temp || !cmp.Equal([]string(r0.Stop), []string{"END"}) {
		t.Errorf("request 0 model, temperature, stop = %q, %v, %v; want other-model, 0.25, [END]", r0.Model, r0.Temperature, r0.Stop)
	}
	// A local server gets max_tokens, which every compatible server knows.
	if r0.MaxTokens == nil || *r0.MaxTokens != 1000 || r0.MaxCompletionTokens != nil {
		t.Errorf("request 0 max_tokens, max_completion_tokens = %v, %v; want 1000, none", r0.MaxTokens, r0.MaxCompletionTokens)
	}
	if r1.MaxTokens == nil || *r1.MaxTokens != 50 || r1.Model != "gpt-test" {
		t.Errorf("request 1 max_tokens, model = %v, %q; want 50, gpt-test", r1.MaxTokens, r1.Model)
	}
}

// redirect sends every request to the fake server, to act as api.openai.com.
type redirect struct{ to *url.URL }

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = r.to.Scheme, r.to.Host
	return http.DefaultTransport.RoundTrip(req)
}

func TestOfficialHostUsesMaxCompletionTokens(t *testing.T) {
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(llmtest.OpenAIText("a")))
	u, _ := url.Parse(s.URL)
	m := newModel(t, s, func(o *openai.Options) {
		o.BaseURL, o.MaxTokens = "", 1000
		o.HTTPClient = &http.Client{Transport: redirect{u}}
	})
	if _, _, err := run(t, t.Context(), m, hello()); err != nil {
		t.Fatalf("Stream error: %v", err)
	}
	r := s.Request(0)
	if r.MaxCompletionTokens == nil || *r.MaxCompletionTokens != 1000 || r.MaxTokens != nil {
		t.Errorf("max_completion_tokens, max_tokens = %v, %v; want 1000, none", r.MaxCompletionTokens, r.MaxTokens)
	}
	if r.Path != "/v1/chat/completions" {
		t.Errorf("path = %q; want /v1/chat/completions", r.Path)
	}
}

func TestToolRoundTrip(t *testing.T) {
	const args = `{"path":"/etc/hosts","limit":10}`
	call := llmtest.OpenAIToolCall("call_1", "read_file", args)
	call.ChunkSize = 3
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(call, llmtest.OpenAIText("It maps localhost.")))
	m := newModel(t, s)
	tools := []llm.ToolSpec{{
		Name:        "read_file",
		Description: "Read a file.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}},"required":["path"]}`),
	}}
	req := llm.Request{Messages: []llm.Message{llm.UserText("What is in /etc/hosts?")}, Tools: tools}

	evs, resp, err := run(t, t.Context(), m, req)
	if err != nil {
		t.Fatalf("Stream error: %v", err)
	}
	if evs[0].Type != llm.EventToolStart || evs[0].Index != 0 || evs[0].Block == nil ||
		evs[0].Block.ToolUseID != "call_1" || evs[0].Block.Name != "read_file" {
		t.Fatalf("first event = %+v; want tool_start 0 call_1 read_file", evs[0])
	}
	var input strings.Builder
	deltas := 0
	for _, ev := range evs[1:] {
		if ev.Type == llm.EventToolInput {
			input.WriteString(ev.Text)
			deltas++
		}
	}
	if input.String() != args || deltas < 2 {
		t.Errorf("tool input deltas = %q in %d events; want %s in several", input.String(), deltas, args)
	}
	wantMsg := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse("call_1", "read_file", json.RawMessage(args))}}
	if diff := cmp.Diff(wantMsg, resp.Message); diff != "" {
		t.Errorf("message mismatch (-want +got):\n%s", diff)
	}
	if resp.StopReason != llm.StopToolUse {
		t.Errorf("stop reason = %q; want tool_use", resp.StopReason)
	}

	req.Messages = append(req.Messages, resp.Message,
		llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult("call_1", "127.0.0.1 localhost", false)}})
	if _, resp, err = run(t, t.Context(), m, req); err != nil {
		t.Fatalf("second Stream error: %v", err)
	}
	if resp.Message.Text() != "It maps localhost." {
		t.Errorf("second answer = %q; want It maps localhost.", resp.Message.Text())
	}

	r0, r1 := s.Request(0), s.Request(1)
	wantTools := []llmtest.OpenAITool{{Type: "function", Function: llmtest.OpenAIFunction{
		Name: "read_file", Description: "Read a file.", Parameters: tools[0].InputSchema,
	}}}
	if diff := cmp.Diff(wantTools, r0.Tools, cmp.Comparer(jsonEqual)); diff != "" {
		t.Errorf("tools mismatch (-want +got):\n%s", diff)
	}
	wantMsgs := []llmtest.OpenAIMessage{
		{Role: "user", Content: "What is in /etc/hosts?"},
		{Role: "assistant", ToolCalls: []llmtest.OpenAIToolCallItem{{ID: "call_1", Type: "function",
			Function: llmtest.OpenAIFunctionCall{Name: "read_file", Arguments: args}}}},
		{Role: "tool", ToolCallID: "call_1", Content: "127.0.0.1 localhost"},
	}
	if diff := cmp.Diff(wantMsgs, r1.Messages); diff != "" {
		t.Errorf("second request messages mismatch (-want +got):\n%s", diff)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && cmp.Equal(x, y)
}

func TestParallelToolCalls(t *testing.T) {
	reply := llmtest.OpenAIToolCalls(
		llmtest.OpenAICall{ID: "call_a", Name: "read_file", Arguments: `{"path":"a.go"}`},
		llmtest.OpenAICall{ID: "call_b", Name: "read_file", Arguments: `{"path":"b.go"}`},
		llmtest.OpenAICall{ID: "call_c", Name: "list_dir", Arguments: ``},
	)
	reply.Text = "Reading both."
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(reply, llmtest.OpenAIText("Done.")))
	m := newModel(t, s)
	req := llm.Request{Messages: []llm.Message{llm.UserText("Compare a.go and b.go.")}}

	evs, resp, err := run(t, t.Context(), m, req)
	if err != nil {
		t.Fatalf("Stream error: %v", err)
	}
	want := []llm.Block{
		llm.Text("Reading both."),
		llm.ToolUse("call_a", "read_file", json.RawMessage(`{"path":"a.go"}`)),
		llm.ToolUse("call_b", "read_file", json.RawMessage(`{"path":"b.go"}`)),
		llm.ToolUse("call_c", "list_dir", json.RawMessage(`{}`)), // empty arguments
	}
	if diff := cmp.Diff(want, resp.Message.Content); diff != "" {
		t.Errorf("content mismatch (-want +got):\n%s", diff)
	}
	inputs := map[int]string{}
	var starts, stops []int
	for _, ev := range evs {
		switch ev.Type {
		case llm.EventToolStart:
			starts = append(starts, ev.Index)
		case llm.EventToolInput:
			inputs[ev.Index] += ev.Text
		case llm.EventBlockStop:
			stops = append(stops, ev.Index)
		}
	}
	if !cmp.Equal(starts, []int{1, 2, 3}) || !cmp.Equal(stops, []int{0, 1, 2, 3}) {
		t.Errorf("tool starts, block stops = %v, %v; want [1 2 3], [0 1 2 3]", starts, stops)
	}
	if diff := cmp.Diff(map[int]string{1: `{"path":"a.go"}`, 2: `{"path":"b.go"}`}, inputs); diff != "" {
		t.Errorf("tool inputs by index mismatch (-want +got):\n%s", diff)
	}

	// Results come back in one user message, with text after them and an
	// error flagged in the content.
	req.Messages = append(req.Messages, resp.Message, llm.Message{Role: llm.RoleUser, Content: []llm.Block{
		llm.ToolResult("call_a", "package a", false),
		llm.Text("Be thorough."),
		llm.ToolResult("call_b", "no such file", true),
		llm.ToolResult("call_c", "a.go", false),
	}})
	if _, _, err := run(t, t.Context(), m, req); err != nil {
		t.Fatalf("second Stream error: %v", err)
	}
	got := s.Request(1).Messages[1:]
	wantMsgs := []llmtest.OpenAIMessage{
		{Role: "assistant", Content: "Reading both.", ToolCalls: []llmtest.OpenAIToolCallItem{
			{ID: "call_a", Type: "function", Function: llmtest.OpenAIFunctionCall{Name: "read_file", Arguments: `{"path":"a.go"}`}},
			{ID: "call_b", Type: "function", Function: llmtest.OpenAIFunctionCall{Name: "read_file", Arguments: `{"path":"b.go"}`}},
			{ID: "call_c", Type: "function", Function: llmtest.OpenAIFunctionCall{Name: "list_dir", Arguments: `{}`}},
		}},
		{Role: "tool", ToolCallID: "call_a", Content: "package a"},
		{Role: "tool", ToolCallID: "call_b", Content: "Error: no such file"},
		{Role: "tool", ToolCallID: "call_c", Content: "a.go"},
		{Role: "user", Content: "Be thorough."},
	}
	if diff := cmp.Diff(wantMsgs, got); diff != "" {
		t.Errorf("second request messages mismatch (-want +got):\n%s", diff)
	}
}

func TestThinkingDroppedAndReasoningStreamed(t *testing.T) {
	reply := llmtest.OpenAIText("42")
	reply.Reasoning = "6 times 7"
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(reply, llmtest.OpenAIText("ok")))
	m := newModel(t, s)
	req := llm.Request{Messages: []llm.Message{llm.UserText("6*7?")}}
	evs, resp, err := run(t, t.Context(), m, req)
	if err != nil {
		t.Fatalf("Stream error: %v", err)
	}
	var thinking string
	for _, ev := range evs {
		if ev.Type == llm.EventThinking {
			thinking += ev.Text
		}
	}
	want := []llm.Block{{Type: llm.BlockThinking, Text: "6 times 7"}, llm.Text("42")}
	if diff := cmp.Diff(want, resp.Message.Content); diff != "" || thinking != "6 times 7" {
		t.Errorf("thinking deltas = %q; content mismatch (-want +got):\n%s", thinking, diff)
	}
	req.Messages = append(req.Messages, resp.Message, llm.UserText("Sure?"),
		llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockRedactedThinking, Data: "xx"}}})
	req.Messages = append(req.Messages, llm.UserText("Well?"))
	if _, _, err := run(t, t.Context(), m, req); err != nil {
		t.Fatalf("second Stream error: %v", err)
	}
	wantMsgs := []llmtest.OpenAIMessage{
		{Role: "user", Content: "6*7?"}, {Role: "assistant", Content: "42"},
		{Role: "user", Content: "Sure?"}, {Role: "user", Content: "Well?"},
	}
	if diff := cmp.Diff(wantMsgs, s.Request(1).Messages); diff != "" {
		t.Errorf("second request messages mismatch (-want +got):\n%s", diff)
	}
}

func TestUsage(t *testing.T) {
	tests := []struct {
		name  string
		reply func() llmtest.OpenAIReply
		want  llm.Usage
	}{
		{"plain", func() llmtest.OpenAIReply {
			r := llmtest.OpenAIText("hi")
			r.Usage = llmtest.OpenAIUsage{PromptTokens: 100, CompletionTokens: 20}
			return r
		}, llm.Usage{InputTokens: 100, OutputTokens: 20}},
		{"cached", func() llmtest.OpenAIReply {
			r := llmtest.OpenAIText("hi")
			r.Usage = llmtest.OpenAIUsage{PromptTokens: 1200, CompletionTokens: 50, CachedTokens: 1024}
			return r
		}, llm.Usage{InputTokens: 176, OutputTokens: 50, CacheReadTokens: 1024}},
		{"server sends none", func() llmtest.OpenAIReply {
			r := llmtest.OpenAIText("hi")
			r.Usage = llmtest.OpenAIUsage{PromptTokens: 100, CompletionTokens: 20}
			r.OmitUsage = true
			return r
		}, llm.Usage{}},
		{"usage with tool calls", func() llmtest.OpenAIReply {
			r := llmtest.OpenAIToolCall("c", "f", `{}`)
			r.Usage = llmtest.OpenAIUsage{PromptTokens: 10, CompletionTokens: 5, CachedTokens: 10}
			return r
		}, llm.Usage{InputTokens: 0, OutputTokens: 5, CacheReadTokens: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(tt.reply()))
			_, resp, err := run(t, t.Context(), newModel(t, s), hello())
			if err != nil {
				t.Fatalf("Stream error: %v", err)
			}
			if resp.Usage != tt.want {
				t.Errorf("usage = %+v; want %+v", resp.Usage, tt.want)
			}
		})
	}
}

func TestStopReasons(t *testing.T) {
	tests := []struct {
		finish string
		tools  bool
		want   llm.StopReason
	}{
		{"stop", false, llm.StopEndTurn},
		{"length", false, llm.StopMaxTokens},
		{"content_filter", false, llm.StopRefusal},
		{"tool_calls", true, llm.StopToolUse},
		{"function_call", true, llm.StopToolUse},
		{"stop", true, llm.StopToolUse}, // servers that finish tool calls with stop
		{"length", true, llm.StopMaxTokens},
		{"abort", false, llm.StopReason("abort")},
	}
	for _, tt := range tests {
		t.Run(tt.finish, func(t *testing.T) {
			r := llmtest.OpenAIText("x")
			if tt.tools {
				r = llmtest.OpenAIToolCall("c", "f", `{"a":1}`)
			}
			r.FinishReason = tt.finish
			s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(r))
			_, resp, err := run(t, t.Context(), newModel(t, s), hello())
			if err != nil {
				t.Fatalf("Stream error: %v", err)
			}
			if resp.StopReason != tt.want {
				t.Errorf("finish %q (tools %v) → %q; want %q", tt.finish, tt.tools, resp.StopReason, tt.want)
			}
		})
	}
	t.Run("refusal", func(t *testing.T) {
		s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(llmtest.OpenAIReply{Refusal: "I can't help with that."}))
		_, resp, err := run(t, t.Context(), newModel(t, s), hello())
		if err != nil {
			t.Fatalf("Stream error: %v", err)
		}
		if resp.StopReason != llm.StopRefusal || resp.Message.Text() != "I can't help with that." {
			t.Errorf("refusal → %q, %q; want refusal and its text", resp.StopReason, resp.Message.Text())
		}
	})
}

func TestInfo(t *testing.T) {
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript())
	tests := []struct {
		model  string
		window int
		want   llm.Info
	}{
		{"qwen3:8b", 0, llm.Info{Provider: "openai", Model: "qwen3:8b"}},
		{"qwen3:8b", 32768, llm.Info{Provider: "openai", Model: "qwen3:8b", ContextWindow: 32768}},
		{"gpt-4o-mini", 0, llm.Info{Provider: "openai", Model: "gpt-4o-mini", ContextWindow: 128_000}},
	}
	for _, tt := range tests {
		m := newModel(t, s, func(o *openai.Options) { o.Model, o.ContextWindow = tt.model, tt.window })
		if got := m.Info(); got != tt.want {
			t.Errorf("Info() = %+v; want %+v", got, tt.want)
		}
	}
}

func TestConcurrentStreams(t *testing.T) {
	const n = 8
	replies := make([]llmtest.OpenAIReply, n)
	for i := range replies {
		replies[i] = llmtest.OpenAIText("same answer")
	}
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(replies...))
	m := newModel(t, s)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := llm.Complete(t.Context(), m, hello())
			if err != nil || resp.Message.Text() != "same answer" {
				t.Errorf("Complete = %q, %v; want same answer", resp.Message.Text(), err)
			}
		})
	}
	wg.Wait()
	if got := len(s.Requests()); got != n {
		t.Errorf("requests = %d; want %d", got, n)
	}
}
