package openai_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/llmtest"
	"github.com/troupe-dev/troupe/llm/openai"
)

func TestRetry(t *testing.T) {
	rateLimited := llmtest.OpenAIError(http.StatusTooManyRequests, "", "Rate limit reached")
	rateLimited.RetryAfterMs = "5"
	cutEarly := llmtest.OpenAIText("never seen")
	cutEarly.CutAfter = 1 // the role chunk only: nothing reaches the caller
	tests := []struct {
		name    string
		first   llmtest.OpenAIReply
		wantErr func(error) bool
	}{
		{"429 with retry-after-ms", rateLimited, isStatus(429)},
		{"503 with backoff", llmtest.OpenAIError(http.StatusServiceUnavailable, "", ""), isStatus(503)},
		{"cut before any event", cutEarly, func(err error) bool { return errors.Is(err, llm.ErrBadResponse) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(tt.first, llmtest.OpenAIText("ok")))
			evs, resp, err := run(t, t.Context(), newModel(t, s), hello())
			if err != nil {
				t.Fatalf("Stream error: %v", err)
			}
			if evs[0].Type != llm.EventRetry || !tt.wantErr(evs[0].Err) {
				t.Errorf("first event = %+v; want retry with the first failure", evs[0])
			}
			for _, ev := range evs[1:] {
				if ev.Type == llm.EventRetry {
					t.Errorf("extra retry event %+v", ev)
				}
			}
			if resp.Message.Text() != "ok" || len(s.Requests()) != 2 {
				t.Errorf("answer, requests = %q, %d; want ok, 2", resp.Message.Text(), len(s.Requests()))
			}
		})
	}
}

func isStatus(status int) func(error) bool {
	return func(err error) bool {
		var ae *llm.APIError
		return errors.As(err, &ae) && ae.Status == status
	}
}

func TestRetriesExhausted(t *testing.T) {
	fail := llmtest.OpenAIError(http.StatusInternalServerError, "", "The server had an error")
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(fail, fail, fail))
	m := newModel(t, s, func(o *openai.Options) { o.MaxRetries = 2 })
	evs, _, err := run(t, t.Context(), m, hello())
	var ae *llm.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("Stream error = %v; want *llm.APIError", err)
	}
	want := llm.APIError{Provider: "openai", Status: 500, Type: "server_error", Message: "The server had an error", RequestID: "req_2"}
	if *ae != want {
		t.Errorf("APIError = %+v; want %+v", *ae, want)
	}
	if len(evs) != 2 || evs[0].Type != llm.EventRetry || evs[1].Type != llm.EventRetry {
		t.Errorf("events = %v; want two retries", types(evs))
	}
	if n := len(s.Requests()); n != 3 {
		t.Errorf("requests = %d; want 3", n)
	}
}

func TestNotRetried(t *testing.T) {
	quota := llmtest.OpenAIError(http.StatusTooManyRequests, "insufficient_quota", "You exceeded your current quota")
	quota.ErrorCode = "insufficient_quota"
	longWait := llmtest.OpenAIError(http.StatusTooManyRequests, "", "")
	longWait.RetryAfter = "120"
	tests := []struct {
		name  string
		reply llmtest.OpenAIReply
		want  llm.APIError
	}{
		{"bad request", llmtest.OpenAIError(http.StatusBadRequest, "invalid_request_error", "bad"),
			llm.APIError{Provider: "openai", Status: 400, Type: "invalid_request_error", Message: "bad", RequestID: "req_0"}},
		{"quota", quota,
			llm.APIError{Provider: "openai", Status: 429, Type: "insufficient_quota", Message: "You exceeded your current quota", RequestID: "req_0"}},
		{"retry-after past MaxRetryDelay", longWait,
			llm.APIError{Provider: "openai", Status: 429, Type: "rate_limit_exceeded", Message: "Too Many Requests", RetryAfter: 2 * time.Minute, RequestID: "req_0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(tt.reply))
			evs, _, err := run(t, t.Context(), newModel(t, s), hello())
			var ae *llm.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("Stream error = %v; want *llm.APIError", err)
			}
			if *ae != tt.want {
				t.Errorf("APIError = %+v; want %+v", *ae, tt.want)
			}
			if len(evs) != 0 || len(s.Requests()) != 1 {
				t.Errorf("events, requests = %v, %d; want none, 1", types(evs), len(s.Requests()))
			}
		})
	}
}

func TestErrorBodies(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"html from a proxy", 502, "<html><body>Bad Gateway</body></html>", "<html><body>Bad Gateway</body></html>"},
		{"fastapi detail", 404, `{"detail":"Not Found"}`, "Not Found"},
		{"error string", 400, `{"error":"model 'llama9' not found"}`, "model 'llama9' not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(llmtest.OpenAIReply{Status: tt.status, ErrorBody: tt.body}))
			m := newModel(t, s, func(o *openai.Options) { o.MaxRetries = -1 })
			_, _, err := run(t, t.Context(), m, hello())
			var ae *llm.APIError
			if !errors.As(err, &ae) || ae.Status != tt.status || ae.Message != tt.want {
				t.Errorf("Stream error = %#v; want *llm.APIError %d %q", err, tt.status, tt.want)
			}
		})
	}
}

func TestUnauthorized(t *testing.T) {
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript())
	s.RequireKey("sk-right")
	_, _, err := run(t, t.Context(), newModel(t, s), hello())
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Status != 401 || ae.Type != "invalid_api_key" || ae.Retryable() {
		t.Errorf("Stream error = %v; want a 401 invalid_api_key *llm.APIError", err)
	}
}

func TestInStreamError(t *testing.T) {
	r := llmtest.OpenAIText("partial answer")
	r.StreamError, r.StreamErrorAfter = true, 2
	r.ErrorType, r.ErrorMessage = "server_error", "The model crashed"
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(r))
	evs, _, err := run(t, t.Context(), newModel(t, s), hello())
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Status != 0 || ae.Type != "server_error" || ae.Message != "The model crashed" {
		t.Fatalf("Stream error = %v; want an in-stream *llm.APIError", err)
	}
	if len(evs) != 1 || evs[0].Type != llm.EventText || len(s.Requests()) != 1 {
		t.Errorf("events, requests = %v, %d; want one text delta, no retry after it", types(evs), len(s.Requests()))
	}
}

func TestBadResponses(t *testing.T) {
	cut := llmtest.OpenAIText("Hello there, how are you today?")
	cut.CutAfter = 3
	const chunk = `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`
	tests := []struct {
		name     string
		reply    llmtest.OpenAIReply
		contains string
		events   int
	}{
		{"cut stream", cut, "stream cut", 2},
		{"garbage", llmtest.OpenAIGarbage(), "not JSON", 0},
		{"clean end before finish", llmtest.OpenAIReply{Raw: "data: " + chunk + "\n\ndata: [DONE]\n\n"}, "without a finish reason", 1},
		{"empty stream", llmtest.OpenAIReply{Raw: "\n"}, "no completion chunk", 0},
		{"invalid arguments", llmtest.OpenAIToolCall("call_9", "write_file", `{"path": "x", "content": `), `tool write_file`, 0},
		{"arguments not an object", llmtest.OpenAIToolCall("call_9", "run", `["ls"]`), `tool run`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(tt.reply))
			evs, _, err := run(t, t.Context(), newModel(t, s), hello())
			if !errors.Is(err, llm.ErrBadResponse) || !strings.Contains(err.Error(), tt.contains) {
				t.Fatalf("Stream error = %v; want llm.ErrBadResponse mentioning %q", err, tt.contains)
			}
			if n := countType(evs, llm.EventText); n != tt.events {
				t.Errorf("text events = %d; want %d", n, tt.events)
			}
			if countType(evs, llm.EventRetry) != 0 || len(s.Requests()) != 1 {
				t.Errorf("events, requests = %v, %d; want no retry", types(evs), len(s.Requests()))
			}
		})
	}
}

func countType(evs []llm.Event, typ llm.EventType) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

var errStop = errors.New("user pressed escape")

func TestCancel(t *testing.T) {
	slow := llmtest.OpenAIText(strings.Repeat("word ", 200))
	slow.Delay = 20 * time.Millisecond // 4 s in all
	waiting := llmtest.OpenAIError(http.StatusTooManyRequests, "", "")
	waiting.RetryAfter = "30"
	tests := []struct {
		name   string
		reply  llmtest.OpenAIReply
		cancel llm.EventType // cancel on the first event of this type
	}{
		{"during a slow stream", slow, llm.EventText},
		{"during a retry wait", waiting, llm.EventRetry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(tt.reply))
			m := newModel(t, s, func(o *openai.Options) { o.MaxRetryDelay = time.Minute })
			ctx, cancel := context.WithCancelCause(t.Context())
			defer cancel(nil)
			var canceled time.Time
			var err error
			for ev, e := range m.Stream(ctx, hello()) {
				if e != nil {
					err = e
					break
				}
				if ev.Type == tt.cancel && canceled.IsZero() {
					canceled = time.Now()
					cancel(errStop)
				}
			}
			if canceled.IsZero() {
				t.Fatalf("no %s event", tt.cancel)
			}
			if !errors.Is(err, errStop) {
				t.Errorf("Stream error = %v; want it to wrap the cancel cause", err)
			}
			if d := time.Since(canceled); d > time.Second {
				t.Errorf("stream ended %v after cancel; want promptly", d)
			}
		})
	}
}

func TestStopIterating(t *testing.T) {
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(llmtest.OpenAIText("one two three four five")))
	m := newModel(t, s)
	n := 0
	for ev, err := range m.Stream(t.Context(), hello()) {
		if err != nil || ev.Type != llm.EventText {
			t.Fatalf("event, error = %+v, %v; want text", ev, err)
		}
		n++
		break
	}
	if n != 1 {
		t.Errorf("events = %d; want 1", n)
	}
}

func TestConnectionRefused(t *testing.T) {
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript())
	m := newModel(t, s, func(o *openai.Options) { o.MaxRetries = 1 })
	s.Close()
	evs, _, err := run(t, t.Context(), m, hello())
	var ae *llm.APIError
	if err == nil || errors.As(err, &ae) || errors.Is(err, llm.ErrBadResponse) {
		t.Errorf("Stream error = %v; want a connection error", err)
	}
	if len(evs) != 1 || evs[0].Type != llm.EventRetry {
		t.Errorf("events = %v; want one retry", types(evs))
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name     string
		opts     openai.Options
		is       error
		contains string
	}{
		{"no key with the default base URL", openai.Options{Model: "gpt-4.1"}, llm.ErrNoCredentials, "OPENAI_API_KEY"},
		{"no key with the OpenAI base URL", openai.Options{Model: "gpt-4.1", BaseURL: "https://api.openai.com/v1/"}, llm.ErrNoCredentials, "OPENAI_API_KEY"},
		{"no model", openai.Options{APIKey: "k"}, llm.ErrNoModel, "model name"},
		{"bad base URL", openai.Options{APIKey: "k", Model: "m", BaseURL: "localhost:11434"}, nil, "OPENAI_BASE_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := openai.New(tt.opts)
			if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) || !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("New(%+v) error = %v; want %v mentioning %q", tt.opts, err, tt.is, tt.contains)
			}
		})
	}
}

func TestLocalServerWithoutKey(t *testing.T) {
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(llmtest.OpenAIText("hi from llama")))
	m, err := openai.New(openai.Options{BaseURL: s.URL, Model: "llama3.2"})
	if err != nil {
		t.Fatalf("New without key on %s error: %v", s.URL, err)
	}
	_, resp, err := run(t, t.Context(), m, hello())
	if err != nil {
		t.Fatalf("Stream error: %v", err)
	}
	if resp.Message.Text() != "hi from llama" {
		t.Errorf("answer = %q; want hi from llama", resp.Message.Text())
	}
	if auth := s.Request(0).Authorization; !strings.HasPrefix(auth, "Bearer ") {
		t.Errorf("Authorization = %q; want a placeholder bearer", auth)
	}
}
