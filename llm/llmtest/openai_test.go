package llmtest_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/llm/llmtest"
)

// post sends body to the fake server's chat completions path and returns
// the status, headers and body.
func post(t *testing.T, url, auth, body string) (int, http.Header, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b), err
}

const streamBody = `{"model":"gpt-test","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`

// events splits an SSE body into its data payloads, failing on anything
// but "data: X\n\n" framing.
func events(t *testing.T, body string) []string {
	t.Helper()
	if !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("body does not end with data: [DONE]: %q", body)
	}
	var out []string
	for _, ev := range strings.SplitAfter(body, "\n\n") {
		if ev == "" {
			continue
		}
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Count(ev, "\n") != 2 {
			t.Fatalf("event %q is not data: X\\n\\n", ev)
		}
		out = append(out, strings.TrimSuffix(data, "\n\n"))
	}
	return out
}

type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role      string `json:"role"`
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		TotalTokens         int64 `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

func decode(t *testing.T, data []string) []chunk {
	t.Helper()
	var out []chunk
	for _, d := range data[:len(data)-1] {
		var c chunk
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("chunk %q: %v", d, err)
		}
		out = append(out, c)
	}
	return out
}

func TestOpenAIServerStreamsLikeTheAPI(t *testing.T) {
	reply := llmtest.OpenAIText("Hello, wörld!")
	reply.ToolCalls = []llmtest.OpenAICall{{ID: "call_1", Name: "f", Arguments: `{"a":"bcdef"}`}}
	reply.Usage = llmtest.OpenAIUsage{PromptTokens: 30, CompletionTokens: 7, CachedTokens: 20}
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(reply))
	status, h, body, err := post(t, s.URL, "", streamBody)
	if err != nil || status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("POST = %d %q, %v; want 200 text/event-stream", status, h.Get("Content-Type"), err)
	}
	chunks := decode(t, events(t, body))
	var text, args string
	var finish []string
	for i, c := range chunks {
		if c.ID != "chatcmpl-0" || c.Object != "chat.completion.chunk" || c.Model != "gpt-test" {
			t.Errorf("chunk %d id, object, model = %q, %q, %q", i, c.ID, c.Object, c.Model)
		}
		if (c.Usage != nil) != (i == len(chunks)-1) {
			t.Errorf("chunk %d usage = %v; want it on the last chunk only", i, c.Usage)
		}
		for _, ch := range c.Choices {
			text += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				args += tc.Function.Arguments
				if tc.ID != "" && (tc.Type != "function" || tc.Function.Name != "f" || tc.Function.Arguments != "") {
					t.Errorf("first tool chunk = %+v; want id, type, name and no arguments", tc)
				}
			}
			if ch.FinishReason != nil {
				finish = append(finish, *ch.FinishReason)
			}
		}
	}
	if chunks[0].Choices[0].Delta.Role != "assistant" {
		t.Errorf("first chunk = %+v; want the role chunk", chunks[0])
	}
	if text != "Hello, wörld!" || args != `{"a":"bcdef"}` || !cmp.Equal(finish, []string{"tool_calls"}) {
		t.Errorf("text, args, finish = %q, %q, %v", text, args, finish)
	}
	last := chunks[len(chunks)-1]
	if len(last.Choices) != 0 || last.Usage.PromptTokens != 30 || last.Usage.TotalTokens != 37 || last.Usage.PromptTokensDetails.CachedTokens != 20 {
		t.Errorf("usage chunk = %+v", last)
	}
	if n := strings.Count(body, `"arguments"`); n < 4 {
		t.Errorf("arguments in %d chunks; want them split", n)
	}
}

func TestOpenAIServerOmitsUsage(t *testing.T) {
	noUsage := llmtest.OpenAIText("a")
	noUsage.OmitUsage = true
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(llmtest.OpenAIText("a"), noUsage))
	for i, body := range []string{
		`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		streamBody,
	} {
		_, _, out, _ := post(t, s.URL, "", body)
		if strings.Contains(out, `"usage"`) {
			t.Errorf("request %d: body has usage: %s", i, out)
		}
	}
}

func TestOpenAIServerRecordsRequests(t *testing.T) {
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(llmtest.OpenAIText("a")))
	body := `{"model":"m","stream":true,"stop":"END","max_tokens":9,"messages":[
		{"role":"system","content":[{"type":"text","text":"be "},{"type":"text","text":"brief"}]},
		{"role":"user","content":"read it"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"data"}],
		"tools":[{"type":"function","function":{"name":"read","parameters":{"type":"object"}}}]}`
	if status, _, out, _ := post(t, s.URL, "Bearer k", body); status != 200 {
		t.Fatalf("POST = %d %s; want 200", status, out)
	}
	got := s.Request(0)
	if got.Authorization != "Bearer k" || got.Path != "/v1/chat/completions" || got.N != 0 || got.IncludeUsage() {
		t.Errorf("request = %+v", got)
	}
	if *got.MaxTokens != 9 || !cmp.Equal([]string(got.Stop), []string{"END"}) || got.Tools[0].Function.Name != "read" {
		t.Errorf("max_tokens, stop, tools = %v, %v, %+v", *got.MaxTokens, got.Stop, got.Tools)
	}
	want := []llmtest.OpenAIMessage{
		{Role: "system", Content: "be brief", Parts: 2},
		{Role: "user", Content: "read it"},
		{Role: "assistant", ToolCalls: []llmtest.OpenAIToolCallItem{{ID: "c1", Type: "function", Function: llmtest.OpenAIFunctionCall{Name: "read", Arguments: "{}"}}}},
		{Role: "tool", ToolCallID: "c1", Content: "data"},
	}
	if diff := cmp.Diff(want, got.Messages); diff != "" {
		t.Errorf("messages mismatch (-want +got):\n%s", diff)
	}
}

func TestOpenAIServerRejects(t *testing.T) {
	msgs := func(m string) string { return `{"model":"m","stream":true,"messages":[` + m + `]}` }
	tests := []struct {
		name, auth, body string
		status           int
		contains         string
	}{
		{"wrong key", "Bearer nope", streamBody, 401, "invalid_api_key"},
		{"no key", "", streamBody, 401, "invalid_api_key"},
		{"not JSON", "Bearer sk", "{", 400, "could not parse"},
		{"no model", "Bearer sk", `{"stream":true,"messages":[{"role":"user","content":"x"}]}`, 400, "model"},
		{"not streaming", "Bearer sk", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, 400, "stream"},
		{"orphan tool message", "Bearer sk", msgs(`{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c9","content":"r"}`), 400, "preceeding message with 'tool_calls'"},
		{"unanswered tool call", "Bearer sk", msgs(`{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"y"}`), 400, "c1"},
		{"bad arguments", "Bearer sk", msgs(`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{"}}]},{"role":"tool","tool_call_id":"c1","content":"r"}`), 400, "not valid JSON"},
	}
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript())
	s.RequireKey("sk")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h, body, _ := post(t, s.URL, tt.auth, tt.body)
			var e struct {
				Error struct{ Message, Type string } `json:"error"`
			}
			if status != tt.status || json.Unmarshal([]byte(body), &e) != nil || e.Error.Type == "" || !strings.Contains(body, tt.contains) {
				t.Errorf("POST = %d %s; want %d with an error mentioning %q", status, body, tt.status, tt.contains)
			}
			if h.Get("x-request-id") == "" {
				t.Errorf("no x-request-id")
			}
		})
	}
	if n := len(s.Requests()); n != len(tests) {
		t.Errorf("recorded %d requests; want %d", n, len(tests))
	}
}

func TestOpenAIServerFaults(t *testing.T) {
	limited := llmtest.OpenAIError(429, "", "")
	limited.RetryAfter, limited.RetryAfterMs = "2", "1500"
	cut := llmtest.OpenAIText("abcdefghijkl")
	cut.CutAfter = 2
	slow := llmtest.OpenAIText("ab")
	slow.Delay = 30 * time.Millisecond
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(limited, llmtest.OpenAIGarbage(), cut, slow))

	status, h, body, _ := post(t, s.URL, "", streamBody)
	if status != 429 || h.Get("Retry-After") != "2" || h.Get("retry-after-ms") != "1500" || !strings.Contains(body, `"code":"rate_limit_exceeded"`) {
		t.Errorf("rate limit = %d %v %s", status, h, body)
	}
	if status, _, body, _ = post(t, s.URL, "", streamBody); status != 200 || !strings.HasPrefix(body, "data: <html>") {
		t.Errorf("garbage = %d %q", status, body)
	}
	status, _, body, err := post(t, s.URL, "", streamBody)
	if !errors.Is(err, io.ErrUnexpectedEOF) || strings.Count(body, "data: ") != 2 || strings.Contains(body, "[DONE]") {
		t.Errorf("cut = %d %q, %v; want two events then unexpected EOF", status, body, err)
	}
	start := time.Now()
	if _, _, body, _ = post(t, s.URL, "", streamBody); time.Since(start) < 5*30*time.Millisecond || !strings.HasSuffix(body, "[DONE]\n\n") {
		t.Errorf("slow reply took %v: %q; want at least 150ms and a whole stream", time.Since(start), body)
	}
}

func TestOpenAIServerStreamError(t *testing.T) {
	r := llmtest.OpenAIText("abcdefgh")
	r.StreamError, r.StreamErrorAfter, r.ErrorMessage = true, 2, "boom"
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(r))
	_, _, body, _ := post(t, s.URL, "", streamBody)
	data := strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n")
	if len(data) != 3 || data[2] != `data: {"error":{"code":null,"message":"boom","param":null,"type":"server_error"}}` {
		t.Errorf("body = %q; want two chunks then an error event", body)
	}
}

// recorder is a testing.TB that keeps Errorf messages.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestOpenAIScriptFailsOnExtraRequests(t *testing.T) {
	rec := &recorder{TB: t}
	s := llmtest.NewOpenAIServer(rec, llmtest.OpenAIScript(llmtest.OpenAIText("a")))
	if status, _, _, _ := post(t, s.URL, "", streamBody); status != 200 {
		t.Fatalf("first request = %d; want 200", status)
	}
	if status, _, _, _ := post(t, s.URL, "", streamBody); status != 400 {
		t.Errorf("extra request = %d; want 400", status)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "unexpected OpenAI request #1") {
		t.Errorf("test errors = %q; want one about the unexpected request", rec.errs)
	}
}

func TestOpenAIServerPaths(t *testing.T) {
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript())
	resp, err := http.Get(s.URL + "/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET = %d; want 405", resp.StatusCode)
	}
	base := strings.TrimSuffix(s.URL, "/v1")
	if status, _, _, _ := post(t, base, "", `{}`); status != 400 {
		t.Errorf("POST /chat/completions = %d; want 400 (served, and invalid)", status)
	}
	if got := s.Requests(); len(got) != 1 || got[0].Path != "/chat/completions" {
		t.Errorf("requests = %+v; want one on /chat/completions", got)
	}
}
