package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// OpenAIServer is a fake OpenAI Chat Completions server: a real HTTP server
// that decodes and records each POST to /v1/chat/completions (or
// /chat/completions), validates it the way the API does (tool messages must
// answer the preceding assistant tool_calls, and so on), and streams the
// handler's reply with the API's SSE framing. It is safe for concurrent use
// and closes itself when the test ends.
type OpenAIServer struct {
	// URL is the base URL for a client, ending in /v1.
	URL string

	t    testing.TB
	h    OpenAIHandler
	srv  *httptest.Server
	done chan struct{} // closed by Close; ends pending delays
	once sync.Once

	mu   sync.Mutex
	key  string          // required bearer key; "" accepts any
	reqs []OpenAIRequest // in arrival order
}

// NewOpenAIServer starts a fake server answering with h.
func NewOpenAIServer(t testing.TB, h OpenAIHandler) *OpenAIServer {
	t.Helper()
	s := &OpenAIServer{t: t, h: h, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", s.serve)
	mux.HandleFunc("/chat/completions", s.serve)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.Close)
	return s
}

// RequireKey makes the server answer 401, as the API does, to requests
// whose Authorization is not "Bearer key". An empty key accepts any.
func (s *OpenAIServer) RequireKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// Requests returns the requests received so far, rejected ones included.
func (s *OpenAIServer) Requests() []OpenAIRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]OpenAIRequest(nil), s.reqs...)
}

// Request returns the i-th request received, failing the test when there
// is none. Call it from the test goroutine.
func (s *OpenAIServer) Request(i int) OpenAIRequest {
	s.t.Helper()
	reqs := s.Requests()
	if i < 0 || i >= len(reqs) {
		s.t.Fatalf("llmtest: OpenAI request #%d not received; got %d requests", i, len(reqs))
	}
	return reqs[i]
}

// Close ends pending delays and streams and shuts the server down. It is
// idempotent.
func (s *OpenAIServer) Close() {
	s.once.Do(func() {
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

func (s *OpenAIServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		oaiWriteError(w, http.StatusMethodNotAllowed, "invalid_request_error", "", "method not allowed")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client went away
	}
	req, decodeErr := oaiDecodeRequest(body)
	req.Path = r.URL.Path
	req.Authorization = r.Header.Get("Authorization")
	req.Body = body
	s.mu.Lock()
	req.N = len(s.reqs)
	s.reqs = append(s.reqs, req)
	key := s.key
	s.mu.Unlock()
	w.Header().Set("x-request-id", fmt.Sprintf("req_%d", req.N))

	switch {
	case key != "" && req.Authorization != "Bearer "+key:
		oaiWriteError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "Incorrect API key provided.")
		return
	case decodeErr != nil:
		oaiWriteError(w, http.StatusBadRequest, "invalid_request_error", "", "We could not parse the JSON body of your request: "+decodeErr.Error())
		return
	}
	if msg := oaiValidate(req); msg != "" {
		oaiWriteError(w, http.StatusBadRequest, "invalid_request_error", "", msg)
		return
	}

	reply := s.h(req)
	if reply.unexpected > 0 {
		s.t.Errorf("llmtest: unexpected OpenAI request #%d: the script has %d replies; body: %s", req.N, reply.unexpected-1, req.Body)
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	if !oaiSleep(ctx, reply.Delay) {
		return
	}
	if reply.RetryAfter != "" {
		w.Header().Set("retry-after", reply.RetryAfter)
	}
	if reply.RetryAfterMs != "" {
		w.Header().Set("retry-after-ms", reply.RetryAfterMs)
	}
	if reply.Status != 0 {
		if reply.ErrorBody != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(reply.Status)
			io.WriteString(w, reply.ErrorBody)
			return
		}
		typ, code, msg := oaiErrorDefaults(reply)
		oaiWriteError(w, reply.Status, typ, code, msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	flush()
	if reply.Raw != "" {
		io.WriteString(w, reply.Raw)
		return
	}
	sent := 0
	for _, ev := range oaiEvents(req, reply) {
		if reply.CutAfter > 0 && sent == reply.CutAfter {
			// Drop the connection: the client sees the chunked body end
			// without its terminator.
			panic(http.ErrAbortHandler)
		}
		if !oaiSleep(ctx, reply.Delay) {
			return
		}
		if _, err := io.WriteString(w, "data: "+ev+"\n\n"); err != nil {
			return
		}
		flush()
		sent++
	}
}

// oaiEvents returns the data of each SSE event of a completion reply, the
// final [DONE] included.
func oaiEvents(req OpenAIRequest, r OpenAIReply) []string {
	id := r.ID
	if id == "" {
		id = fmt.Sprintf("chatcmpl-%d", req.N)
	}
	model := r.Model
	if model == "" {
		model = req.Model
	}
	size := r.ChunkSize
	if size <= 0 {
		size = 4
	}
	withUsage := req.IncludeUsage() && !r.OmitUsage
	var out []string
	chunk := func(delta map[string]any, finish any) {
		c := map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 1767225600, "model": model,
			"system_fingerprint": "fp_llmtest",
			"choices":            []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
		}
		if withUsage {
			c["usage"] = nil // the API sends null on every chunk but the last
		}
		out = append(out, oaiJSON(c))
	}
	chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)
	for _, p := range oaiSplit(r.Reasoning, size) {
		chunk(map[string]any{"reasoning_content": p}, nil)
	}
	for _, p := range oaiSplit(r.Text, size) {
		chunk(map[string]any{"content": p}, nil)
	}
	for _, p := range oaiSplit(r.Refusal, size) {
		chunk(map[string]any{"refusal": p}, nil)
	}
	for i, c := range r.ToolCalls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""},
		}}}, nil)
		for _, p := range oaiSplit(c.Arguments, size) {
			chunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": p},
			}}}, nil)
		}
	}
	if r.StreamError {
		n := min(r.StreamErrorAfter, len(out))
		typ, code, msg := oaiErrorDefaults(OpenAIReply{Status: http.StatusInternalServerError,
			ErrorType: r.ErrorType, ErrorCode: r.ErrorCode, ErrorMessage: r.ErrorMessage})
		return append(out[:n], oaiJSON(map[string]any{"error": oaiErrorObject(typ, code, msg)}))
	}
	finish := r.FinishReason
	if finish == "" {
		finish = "stop"
		if len(r.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	chunk(map[string]any{}, finish)
	if withUsage {
		u := r.Usage
		out = append(out, oaiJSON(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 1767225600, "model": model,
			"system_fingerprint": "fp_llmtest", "choices": []any{},
			"usage": map[string]any{
				"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens,
				"total_tokens":              u.PromptTokens + u.CompletionTokens,
				"prompt_tokens_details":     map[string]any{"cached_tokens": u.CachedTokens, "audio_tokens": 0},
				"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0},
			},
		}))
	}
	return append(out, "[DONE]")
}

// oaiSplit cuts s into pieces of n runes.
func oaiSplit(s string, n int) []string {
	var out []string
	for s != "" {
		i, k := 0, 0
		for i < len(s) && k < n {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
			k++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

func oaiErrorDefaults(r OpenAIReply) (typ, code, msg string) {
	typ, code, msg = r.ErrorType, r.ErrorCode, r.ErrorMessage
	if msg == "" {
		msg = http.StatusText(r.Status)
	}
	if typ == "" {
		switch {
		case r.Status == http.StatusTooManyRequests:
			typ = "requests"
			if code == "" {
				code = "rate_limit_exceeded"
			}
		case r.Status >= 500:
			typ = "server_error"
		default:
			typ = "invalid_request_error"
		}
	}
	return typ, code, msg
}

func oaiErrorObject(typ, code, msg string) map[string]any {
	var c any
	if code != "" {
		c = code
	}
	return map[string]any{"message": msg, "type": typ, "param": nil, "code": c}
}

func oaiWriteError(w http.ResponseWriter, status int, typ, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, oaiJSON(map[string]any{"error": oaiErrorObject(typ, code, msg)}))
}

func oaiJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("llmtest: encode %T: %v", v, err))
	}
	return string(b)
}

// oaiSleep waits d or until ctx ends, and reports whether d elapsed.
func oaiSleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
