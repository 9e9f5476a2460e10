package llmtest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// anthPost sends body to the fake server's Messages endpoint.
func anthPost(t *testing.T, s *AnthropicServer, query, key, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+"/v1/messages"+query, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type anthSSE struct {
	event string
	data  map[string]any
}

// anthReadSSE parses an event stream strictly: every event has an event
// line and one data line holding a JSON object whose type is the event's.
func anthReadSSE(t *testing.T, r io.Reader) ([]anthSSE, error) {
	t.Helper()
	var out []anthSSE
	sc := bufio.NewScanner(r)
	var cur anthSSE
	var hasData bool
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.event == "" || !hasData {
				t.Errorf("incomplete SSE event %+v", cur)
			}
			out = append(out, cur)
			cur, hasData = anthSSE{}, false
		case strings.HasPrefix(line, "event: "):
			cur.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data); err != nil {
				t.Errorf("SSE data %q: %v", line, err)
			}
			if cur.data["type"] != cur.event {
				t.Errorf("SSE event %q carries data of type %v", cur.event, cur.data["type"])
			}
			hasData = true
		default:
			t.Errorf("unexpected SSE line %q", line)
		}
	}
	return out, sc.Err()
}

func anthEventNames(evs []anthSSE) []string {
	var out []string
	for _, ev := range evs {
		name := ev.event
		if d, ok := ev.data["delta"].(map[string]any); ok && ev.event == "content_block_delta" {
			name += "/" + fmt.Sprint(d["type"])
		}
		if cb, ok := ev.data["content_block"].(map[string]any); ok {
			name += "/" + fmt.Sprint(cb["type"])
		}
		out = append(out, name)
	}
	return out
}

// claudeCodeBody is shaped like Claude Code's first request (docs/protocol.md
// section 14): system blocks with cache_control, string and block content,
// a trailing role "system" message, a deferred tool, adaptive thinking.
const claudeCodeBody = `{
  "model": "claude-opus-5-5", "max_tokens": 128000, "stream": true,
  "thinking": {"type": "adaptive", "display": "omitted"},
  "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
  "output_config": {"effort": "medium"},
  "metadata": {"user_id": "{\"device_id\":\"d\"}"},
  "system": [
    {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.328"},
    {"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral", "ttl": "1h"}},
    {"type": "text", "text": "Tools guide.", "cache_control": {"type": "ephemeral"}}
  ],
  "tools": [
    {"name": "Bash", "description": "Run", "input_schema": {"type": "object"}},
    {"name": "DeferredToolPlaceholder", "description": "x", "input_schema": {"type": "object"}, "defer_loading": true}
  ],
  "messages": [
    {"role": "user", "content": [{"type": "text", "text": "<system-reminder>r</system-reminder>"}, {"type": "text", "text": "hi"}]},
    {"role": "system", "content": "<env>linux</env>"}
  ]
}`

func TestAnthropicServerClaudeCodeRequest(t *testing.T) {
	s := NewAnthropicServer(t, AnthropicScript(AnthropicContent(
		AnthropicThinkingBlock("plan", "c2ln"),
		AnthropicTextBlock("Hello there"),
		AnthropicToolUseBlock("toolu_1", "Bash", `{"command":"ls -la"}`),
	)))
	resp := anthPost(t, s, "?beta=true", "dummy", claudeCodeBody)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST = %d %s %s; want 200 text/event-stream", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	evs, err := anthReadSSE(t, resp.Body)
	if err != nil {
		t.Fatalf("reading stream: %v", err)
	}
	want := []string{
		"message_start", "ping",
		"content_block_start/thinking", "content_block_delta/thinking_delta", "content_block_delta/signature_delta", "content_block_stop",
		"content_block_start/text", "content_block_delta/text_delta", "content_block_delta/text_delta", "content_block_stop",
		"content_block_start/tool_use", "content_block_delta/input_json_delta", "content_block_delta/input_json_delta",
		"content_block_delta/input_json_delta", "content_block_delta/input_json_delta", "content_block_stop",
		"message_delta", "message_stop",
	}
	if diff := cmp.Diff(want, anthEventNames(evs)); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
	var input string
	for _, ev := range evs {
		if d, ok := ev.data["delta"].(map[string]any); ok && d["type"] == "input_json_delta" {
			input += d["partial_json"].(string)
		}
	}
	if input != `{"command":"ls -la"}` {
		t.Errorf("input_json_delta chunks join to %q", input)
	}
	if d := evs[len(evs)-2].data["delta"].(map[string]any); d["stop_reason"] != "tool_use" {
		t.Errorf("stop_reason = %v; want tool_use", d["stop_reason"])
	}

	got := s.LastRequest()
	if got.Query.Get("beta") != "true" || got.APIKey() != "dummy" || got.Model != "claude-opus-5-5" || !got.Stream {
		t.Errorf("request query %v key %q model %q stream %v", got.Query, got.APIKey(), got.Model, got.Stream)
	}
	if len(got.Messages) != 2 || got.Messages[1].Role != "system" || got.Messages[1].Content[0].Text != "<env>linux</env>" {
		t.Errorf("messages = %+v; want user then system", got.Messages)
	}
	if diff := cmp.Diff([]string{"system[1]", "system[2]"}, got.CacheBreakpoints()); diff != "" {
		t.Errorf("breakpoints mismatch (-want +got):\n%s", diff)
	}
	if got.System[1].CacheControl.TTL != "1h" || got.Thinking.Type != "adaptive" || len(got.Tools) != 2 {
		t.Errorf("system %+v thinking %+v tools %d", got.System, got.Thinking, len(got.Tools))
	}
}

func TestAnthropicServerNonStreaming(t *testing.T) {
	s := NewAnthropicServer(t, AnthropicScript(
		AnthropicToolCall("toolu_2", "Read", `{"file_path":"/a"}`).WithUsage(AnthropicUsage{InputTokens: 3, OutputTokens: 4, CacheReadInputTokens: 5}),
	))
	resp := anthPost(t, s, "", "k", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`)
	var msg struct {
		ID         string `json:"id"`
		Model      string `json:"model"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type  string          `json:"type"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
		Usage AnthropicUsage `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if msg.ID != "msg_fake_1" || msg.Model != "m" || msg.StopReason != "tool_use" || len(msg.Content) != 1 ||
		string(msg.Content[0].Input) != `{"file_path":"/a"}` || msg.Usage.CacheReadInputTokens != 5 {
		t.Errorf("message = %+v", msg)
	}
}

func TestAnthropicServerRejects(t *testing.T) {
	five := `{"model":"m","max_tokens":1,"system":[` + strings.Repeat(`{"type":"text","text":"s","cache_control":{"type":"ephemeral"}},`, 4) +
		`{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"x"}]}`
	tests := []struct {
		name, path, key, body string
		status                int
		typ                   string
	}{
		{"no key", "/v1/messages", "", `{}`, 401, "authentication_error"},
		{"bad JSON", "/v1/messages", "k", `{`, 400, "invalid_request_error"},
		{"no model", "/v1/messages", "k", `{"max_tokens":1,"messages":[{"role":"user","content":"x"}]}`, 400, "invalid_request_error"},
		{"unknown role", "/v1/messages", "k", `{"model":"m","max_tokens":1,"messages":[{"role":"tool","content":"x"}]}`, 400, "invalid_request_error"},
		{"empty text", "/v1/messages", "k", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, 400, "invalid_request_error"},
		{"five breakpoints", "/v1/messages", "k", five, 400, "invalid_request_error"},
		{"other path", "/v1/models", "k", `{}`, 404, "not_found_error"},
	}
	s := NewAnthropicServer(t, AnthropicScript())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+tt.path, strings.NewReader(tt.body))
			if tt.key != "" {
				req.Header.Set("x-api-key", tt.key)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Type  string `json:"type"`
				Error struct{ Type, Message string }
			}
			json.NewDecoder(resp.Body).Decode(&body)
			if resp.StatusCode != tt.status || body.Type != "error" || body.Error.Type != tt.typ {
				t.Errorf("POST %s = %d %+v; want %d %s", tt.path, resp.StatusCode, body, tt.status, tt.typ)
			}
		})
	}
	if n := s.RequestCount(); n != 0 {
		t.Errorf("RequestCount() = %d; want 0 (rejected requests are not recorded)", n)
	}
}

func TestAnthropicFault(t *testing.T) {
	s := NewAnthropicServer(t, AnthropicScript(
		AnthropicFault{Status: 529, RetryAfter: "2"},
		AnthropicFault{Type: "overloaded_error", InStream: true},
	))
	body := `{"model":"m","max_tokens":1,"stream":true,"messages":[{"role":"user","content":"x"}]}`
	resp := anthPost(t, s, "", "k", body)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 529 || resp.Header.Get("Retry-After") != "2" || resp.Header.Get("Request-Id") != "req_fake_1" ||
		!strings.Contains(string(b), `"overloaded_error"`) {
		t.Errorf("fault = %d retry-after %q request-id %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Request-Id"), b)
	}
	resp = anthPost(t, s, "", "k", body)
	evs, err := anthReadSSE(t, resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("in-stream fault: %d, %v", resp.StatusCode, err)
	}
	if got := anthEventNames(evs); !cmp.Equal(got, []string{"message_start", "error"}) {
		t.Errorf("in-stream fault events = %q; want message_start, error", got)
	}
}

func TestAnthropicCut(t *testing.T) {
	r := AnthropicText("a ", "b ", "c")
	r.CutAfter = 4
	s := NewAnthropicServer(t, AnthropicScript(r))
	resp := anthPost(t, s, "", "k", `{"model":"m","max_tokens":1,"stream":true,"messages":[{"role":"user","content":"x"}]}`)
	evs, err := anthReadSSE(t, resp.Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("reading a cut stream: error %v; want io.ErrUnexpectedEOF", err)
	}
	if len(evs) != 4 {
		t.Errorf("got %d events before the cut; want 4", len(evs))
	}
}

// anthRecTB records Errorf calls instead of failing.
type anthRecTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *anthRecTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestAnthropicScriptExhausted(t *testing.T) {
	rec := &anthRecTB{TB: t}
	s := NewAnthropicServer(rec, AnthropicScript(AnthropicText("one")))
	body := `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}]}`
	if resp := anthPost(t, s, "", "k", body); resp.StatusCode != 200 {
		t.Errorf("first request = %d; want 200", resp.StatusCode)
	}
	if resp := anthPost(t, s, "", "k", body); resp.StatusCode != 500 {
		t.Errorf("unscripted request = %d; want 500", resp.StatusCode)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "only 1 replies are scripted") {
		t.Errorf("test errors = %q; want one about the exhausted script", rec.errs)
	}
}

func TestAnthropicSplit(t *testing.T) {
	for _, s := range []string{"", "{}", `{"a":"ääää","b":[1,2,3]}`, "日本語"} {
		parts := anthSplitJSON(s)
		if got := strings.Join(parts, ""); got != s || parts[0] != "" {
			t.Errorf("anthSplitJSON(%q) = %q; want an empty first part and pieces joining to the input", s, parts)
		}
		for _, p := range parts {
			if !json.Valid([]byte(fmt.Sprintf("%q", p))) || strings.ToValidUTF8(p, "?") != p {
				t.Errorf("anthSplitJSON(%q) cut a rune: %q", s, p)
			}
		}
	}
	if got := anthSplitWords("Hello,  big world"); !cmp.Equal(got, []string{"Hello,  ", "big ", "world"}) {
		t.Errorf("anthSplitWords = %q", got)
	}
}
