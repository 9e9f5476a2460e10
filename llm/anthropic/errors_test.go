package anthropic

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/llmtest"
)

func TestRetry(t *testing.T) {
	tests := []struct {
		name       string
		fault      llmtest.AnthropicReply
		wantStatus int    // of the *llm.APIError in EventRetry; -1 when none
		wantType   string // of that error
	}{
		{"429 retry-after 0", llmtest.AnthropicFault{Status: 429, RetryAfter: "0"}, 429, "rate_limit_error"},
		{"529 overloaded", llmtest.AnthropicFault{Status: 529, Type: "overloaded_error", RetryAfter: "0"}, 529, "overloaded_error"},
		{"500 without retry-after", llmtest.AnthropicFault{Status: 500}, 500, "api_error"},
		{"overloaded inside the stream", llmtest.AnthropicFault{Type: "overloaded_error", InStream: true}, 0, "overloaded_error"},
		{"cut before content", func() llmtest.AnthropicReply { r := llmtest.AnthropicText("lost"); r.CutAfter = 2; return r }(), -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(tt.fault, llmtest.AnthropicText("fine")))
			m := newModel(t, srv, nil)
			evs, err := collect(t, m.Stream(t.Context(), hello()))
			if err != nil {
				t.Fatalf("Stream() error: %v", err)
			}
			retries := ofType(evs, llm.EventRetry)
			if len(retries) != 1 || evs[0].Type != llm.EventRetry {
				t.Fatalf("events = %+v; want one EventRetry first", evs)
			}
			var ae *llm.APIError
			switch isAPI := errors.As(retries[0].Err, &ae); {
			case tt.wantStatus < 0 && isAPI:
				t.Errorf("EventRetry.Err = %v; want a connection error", retries[0].Err)
			case tt.wantStatus >= 0 && !isAPI:
				t.Errorf("EventRetry.Err = %v; want an *llm.APIError", retries[0].Err)
			case isAPI && (ae.Status != tt.wantStatus || ae.Type != tt.wantType):
				t.Errorf("EventRetry.Err = status %d type %q; want %d %q", ae.Status, ae.Type, tt.wantStatus, tt.wantType)
			}
			if got := done(t, evs).Message.Text(); got != "fine" {
				t.Errorf("text = %q; want fine", got)
			}
			if n := srv.RequestCount(); n != 2 {
				t.Errorf("server got %d requests; want 2", n)
			}
		})
	}
}

func TestErrorNotRetried(t *testing.T) {
	tests := []struct {
		name     string
		replies  []llmtest.AnthropicReply
		retries  int
		want     llm.APIError
		requests int
	}{
		{"500 exhausted",
			[]llmtest.AnthropicReply{llmtest.AnthropicFault{Status: 500}, llmtest.AnthropicFault{Status: 500}, llmtest.AnthropicFault{Status: 500}},
			2, llm.APIError{Provider: "anthropic", Status: 500, Type: "api_error", Message: "Internal server error", RequestID: "req_fake_3"}, 3},
		{"400",
			[]llmtest.AnthropicReply{llmtest.AnthropicFault{Status: 400, Message: "max_tokens: too large"}},
			0, llm.APIError{Provider: "anthropic", Status: 400, Type: "invalid_request_error", Message: "max_tokens: too large", RequestID: "req_fake_1"}, 1},
		{"retry-after beyond the cap",
			[]llmtest.AnthropicReply{llmtest.AnthropicFault{Status: 429, RetryAfter: "3600"}},
			0, llm.APIError{Provider: "anthropic", Status: 429, Type: "rate_limit_error", Message: "Number of request tokens has exceeded your per-minute rate limit", RetryAfter: time.Hour, RequestID: "req_fake_1"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(tt.replies...))
			m := newModel(t, srv, func(o *Options) { o.MaxRetries = 2 })
			evs, err := collect(t, m.Stream(t.Context(), hello()))
			var ae *llm.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("Stream() error = %v; want an *llm.APIError", err)
			}
			if diff := cmp.Diff(tt.want, *ae); diff != "" {
				t.Errorf("APIError mismatch (-want +got):\n%s", diff)
			}
			if n := len(ofType(evs, llm.EventRetry)); n != tt.retries {
				t.Errorf("got %d EventRetry; want %d", n, tt.retries)
			}
			if n := srv.RequestCount(); n != tt.requests {
				t.Errorf("server got %d requests; want %d", n, tt.requests)
			}
		})
	}
}

func TestNoRetries(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(llmtest.AnthropicFault{Status: 529, RetryAfter: "0"}))
	m := newModel(t, srv, func(o *Options) { o.MaxRetries = -1 })
	_, err := collect(t, m.Stream(t.Context(), hello()))
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Status != 529 || !ae.Retryable() {
		t.Errorf("Stream() error = %v; want a retryable 529 *llm.APIError", err)
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript())
	m := newModel(t, srv, func(o *Options) { o.MaxRetries = 2 })
	srv.Close()
	evs, err := collect(t, m.Stream(t.Context(), hello()))
	if err == nil || errors.Is(err, llm.ErrBadResponse) {
		t.Errorf("Stream() error = %v; want a connection error", err)
	}
	if n := len(ofType(evs, llm.EventRetry)); n != 2 {
		t.Errorf("got %d EventRetry; want 2", n)
	}
}

func TestBadResponse(t *testing.T) {
	cut := llmtest.AnthropicText("one ", "two ", "three")
	cut.CutAfter = 5 // message_start, ping, block start, "one ", "two "
	badTool := llmtest.AnthropicToolCall("toolu_9", "edit", `{"path": "a.go", `)
	tests := []struct {
		name     string
		reply    llmtest.AnthropicReply
		wantText string // in the error
		texts    []string
	}{
		{"cut mid-stream", cut, "stream cut", []string{"one ", "two "}},
		{"html", llmtest.AnthropicGarbage{ContentType: "text/html"}, "before message_stop", nil},
		{"invalid JSON event", llmtest.AnthropicGarbage{Body: "event: message_start\ndata: {\"type\": \"message_start\", oops\n\n"}, "invalid character", nil},
		{"events out of order", llmtest.AnthropicGarbage{Body: "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n"}, "index 3", nil},
		{"tool input not JSON", badTool, "edit", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(tt.reply))
			m := newModel(t, srv, nil)
			evs, err := collect(t, m.Stream(t.Context(), hello()))
			if !errors.Is(err, llm.ErrBadResponse) {
				t.Fatalf("Stream() error = %v; want ErrBadResponse", err)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("Stream() error = %q; want it to contain %q", err, tt.wantText)
			}
			if got := texts(ofType(evs, llm.EventText)); !cmp.Equal(got, tt.texts) {
				t.Errorf("text deltas = %q; want %q", got, tt.texts)
			}
			if n := len(ofType(evs, llm.EventRetry)); n != 0 {
				t.Errorf("got %d EventRetry; want none", n)
			}
		})
	}
}

func TestCancel(t *testing.T) {
	errStop := errors.New("user interrupt")
	slow := llmtest.AnthropicText("first ", "second")
	slow.EventDelay = 50 * time.Millisecond
	tests := []struct {
		name  string
		reply llmtest.AnthropicReply
		// cancelOn cancels when this event type arrives; "" cancels after 100ms.
		cancelOn llm.EventType
	}{
		{"during the stream", func() llmtest.AnthropicReply {
			r := llmtest.AnthropicText("first ", "second")
			r.EventDelay = 30 * time.Second
			return r
		}(), ""},
		{"after a delta", slow, llm.EventText},
		{"before headers", llmtest.AnthropicResponse{Delay: 30 * time.Second}, ""},
		{"during retry backoff", llmtest.AnthropicFault{Status: 429, RetryAfter: "30"}, llm.EventRetry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(tt.reply))
			m := newModel(t, srv, func(o *Options) { o.RetryMaxDelay = time.Minute })
			ctx, cancel := context.WithCancelCause(t.Context())
			defer cancel(nil)
			if tt.cancelOn == "" {
				time.AfterFunc(100*time.Millisecond, func() { cancel(errStop) })
			}
			start := time.Now()
			var err error
			var seen []llm.Event
			func() {
				type r struct{ err error }
				ch := make(chan r, 1)
				go func() {
					for ev, e := range m.Stream(ctx, hello()) {
						if e != nil {
							ch <- r{e}
							return
						}
						seen = append(seen, ev)
						if ev.Type == tt.cancelOn {
							cancel(errStop)
						}
					}
					ch <- r{nil}
				}()
				select {
				case res := <-ch:
					err = res.err
				case <-time.After(5 * time.Second):
					t.Fatal("stream did not end within 5s of cancel")
				}
			}()
			if !errors.Is(err, errStop) {
				t.Errorf("Stream() error = %v; want it to wrap the cancel cause", err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("Stream() took %v after cancel; want prompt", d)
			}
			for _, ev := range seen {
				if ev.Type == llm.EventDone {
					t.Errorf("got EventDone after cancel")
				}
			}
		})
	}
}

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{"seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second, true},
		{"fraction", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond, true},
		{"ms wins", map[string]string{"Retry-After": "3", "Retry-After-Ms": "20"}, 20 * time.Millisecond, true},
		{"date", map[string]string{"Retry-After": now.Add(7 * time.Second).Format(http1123)}, 7 * time.Second, true},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0, false},
		{"absent", nil, 0, false},
	}
	for _, tt := range tests {
		h := make(map[string][]string)
		for k, v := range tt.header {
			h[k] = []string{v}
		}
		got, ok := retryAfter(h, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: retryAfter(%v) = %v, %v; want %v, %v", tt.name, tt.header, got, ok, tt.want, tt.ok)
		}
	}
}

const http1123 = "Mon, 02 Jan 2006 15:04:05 GMT"
