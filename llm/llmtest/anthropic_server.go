package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// AnthropicServer is a fake Anthropic Messages API on a real local HTTP
// server. It answers POST /v1/messages (with any query, such as Claude
// Code's ?beta=true):
//   - without an x-api-key header (or an Authorization bearer token) with
//     401 authentication_error;
//   - with a body that is not a valid request (malformed JSON, no model,
//     max_tokens or messages, an unknown role, more than 4 cache_control
//     markers) with 400 invalid_request_error;
//   - otherwise with the reply its handler picks, streamed with the API's
//     SSE framing when the request has "stream": true.
//
// POST /v1/messages/count_tokens is answered with an estimate (a quarter
// of the body's length in bytes) without calling the handler, so a client
// that counts tokens does not consume a scripted reply; those requests are
// recorded apart (CountTokensRequests).
//
// Requests that reach the handler are recorded. Any other path gets 404
// not_found_error and is logged to the test and recorded (UnknownPaths), so
// a client that calls an endpoint the fake lacks says so in the test
// output. It is safe for concurrent use.
type AnthropicServer struct {
	// URL is the base URL to configure clients with (ANTHROPIC_BASE_URL),
	// without the /v1 path.
	URL string

	t    testing.TB
	h    AnthropicHandler
	srv  *httptest.Server
	done chan struct{} // closed by Close; ends delays

	mu      sync.Mutex
	reqs    []AnthropicRequest // guarded by mu
	counts  []AnthropicRequest // count_tokens requests; guarded by mu
	unknown []string           // "METHOD /path" of unserved requests; guarded by mu
	closed  bool               // guarded by mu; no logging to t once set
	once    sync.Once
}

// NewAnthropicServer starts a fake Messages API answering with h, and
// closes it when the test ends. A nil h answers every request with
// AnthropicText("ok").
func NewAnthropicServer(t testing.TB, h AnthropicHandler) *AnthropicServer {
	t.Helper()
	if h == nil {
		h = func(*AnthropicRequest) AnthropicReply { return AnthropicText("ok") }
	}
	s := &AnthropicServer{t: t, h: h, done: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
	return s
}

// Close shuts the server down, ending delayed replies first. It is
// idempotent.
func (s *AnthropicServer) Close() {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// Env returns the environment that points Claude Code or the troupe CLI
// at s: ANTHROPIC_BASE_URL and a dummy ANTHROPIC_API_KEY.
func (s *AnthropicServer) Env() []string {
	return []string{"ANTHROPIC_BASE_URL=" + s.URL, "ANTHROPIC_API_KEY=llmtest-key"}
}

// Requests returns the requests that reached the handler, in arrival
// order. The caller must not modify their slices.
func (s *AnthropicServer) Requests() []AnthropicRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]AnthropicRequest(nil), s.reqs...)
}

// RequestCount returns how many requests reached the handler.
func (s *AnthropicServer) RequestCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// CountTokensRequests returns the POST /v1/messages/count_tokens requests,
// in arrival order.
func (s *AnthropicServer) CountTokensRequests() []AnthropicRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]AnthropicRequest(nil), s.counts...)
}

// UnknownPaths returns "METHOD /path?query" for every request to a path
// the fake does not serve, in arrival order.
func (s *AnthropicServer) UnknownPaths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.unknown...)
}

// LastRequest returns the last request that reached the handler, failing
// the test if there is none.
func (s *AnthropicServer) LastRequest() AnthropicRequest {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		s.t.Fatal("llmtest: no anthropic request received")
	}
	return s.reqs[len(s.reqs)-1]
}

func (s *AnthropicServer) serveHTTP(w http.ResponseWriter, r *http.Request) {
	c := &anthCall{w: w, r: r, done: s.done}
	switch r.URL.Path {
	case "/v1/messages", "/v1/messages/count_tokens":
	default:
		what := r.Method + " " + r.URL.RequestURI()
		s.mu.Lock()
		s.unknown = append(s.unknown, what)
		closed := s.closed
		s.mu.Unlock()
		if !closed {
			s.t.Logf("llmtest: fake Anthropic server does not serve %s (answered 404)", what)
		}
		c.json(http.StatusNotFound, anthErrorBody("not_found_error", "Not found: "+r.URL.Path, ""))
		return
	}
	if r.Method != http.MethodPost {
		c.json(http.StatusMethodNotAllowed, anthErrorBody("invalid_request_error", "Method not allowed", ""))
		return
	}
	if (AnthropicRequest{Header: r.Header}).APIKey() == "" {
		c.json(http.StatusUnauthorized, anthErrorBody("authentication_error", "x-api-key header is required", ""))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req, err := anthDecodeRequest(body)
	if err != nil {
		c.json(http.StatusBadRequest, anthErrorBody("invalid_request_error", err.Error(), ""))
		return
	}
	req.Method, req.Path, req.Query, req.Header = r.Method, r.URL.Path, r.URL.Query(), r.Header.Clone()
	if r.URL.Path == "/v1/messages/count_tokens" {
		s.countTokens(c, req)
		return
	}
	if msg := anthValidate(req); msg != "" {
		c.json(http.StatusBadRequest, anthErrorBody("invalid_request_error", msg, ""))
		return
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	c.n = len(s.reqs)
	s.mu.Unlock()
	c.req = &req
	c.requestID = fmt.Sprintf("req_fake_%d", c.n)
	w.Header().Set("Request-Id", c.requestID)

	reply := s.h(&req)
	if reply == nil {
		s.t.Errorf("llmtest: anthropic handler returned no reply for request %d", c.n)
		reply = AnthropicFault{Status: 500, Message: "llmtest: no reply"}
	}
	reply.anthServe(s, c)
}

// countTokens answers a count_tokens request: the same body as a message
// request less max_tokens and stream.
func (s *AnthropicServer) countTokens(c *anthCall, req AnthropicRequest) {
	req.MaxTokens = 1 // not part of a count_tokens body
	if msg := anthValidate(req); msg != "" {
		c.json(http.StatusBadRequest, anthErrorBody("invalid_request_error", msg, ""))
		return
	}
	req.MaxTokens = 0
	s.mu.Lock()
	s.counts = append(s.counts, req)
	s.mu.Unlock()
	c.json(http.StatusOK, map[string]any{"input_tokens": max(1, len(req.Body)/4)})
}

// anthCall is one request being answered.
type anthCall struct {
	w         http.ResponseWriter
	r         *http.Request
	done      <-chan struct{}
	req       *AnthropicRequest
	n         int // 1-based request number
	requestID string
}

// sleep waits d, and reports false if the client went away or the server
// closed first.
func (c *anthCall) sleep(d time.Duration) bool {
	if d <= 0 {
		return c.r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.r.Context().Done():
		return false
	case <-c.done:
		return false
	}
}

func (c *anthCall) json(status int, v any) {
	c.w.Header().Set("Content-Type", "application/json")
	c.w.WriteHeader(status)
	json.NewEncoder(c.w).Encode(v)
}

func (c *anthCall) startStream() {
	h := c.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	c.w.WriteHeader(http.StatusOK)
}

// event writes one SSE event and flushes it; it reports false when the
// client is gone.
func (c *anthCall) event(typ string, data any) bool {
	b, err := json.Marshal(data)
	if err != nil {
		panic(fmt.Sprintf("llmtest: encode %s event: %v", typ, err))
	}
	if _, err := fmt.Fprintf(c.w, "event: %s\ndata: %s\n\n", typ, b); err != nil {
		return false
	}
	return http.NewResponseController(c.w).Flush() == nil
}

// cut drops the connection mid-response, as a crashed proxy would: the
// client sees the body end without its final chunk.
func (c *anthCall) cut() {
	panic(http.ErrAbortHandler)
}
