package llmtest

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// AnthropicHandler decides the fake server's answer to one request. It runs
// on the server's goroutines, possibly concurrently, and must not call
// t.FailNow.
type AnthropicHandler func(req *AnthropicRequest) AnthropicReply

// AnthropicReply is a scripted answer: an [AnthropicResponse], an
// [AnthropicFault] or [AnthropicGarbage].
type AnthropicReply interface {
	anthServe(s *AnthropicServer, c *anthCall)
}

// AnthropicUsage is the token usage of a scripted reply.
type AnthropicUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// AnthropicResponse is a successful reply: a streamed message when the
// request asked for a stream, a JSON message otherwise.
type AnthropicResponse struct {
	ID         string // default "msg_fake_<n>"
	Model      string // default the request's model
	Content    []AnthropicBlock
	StopReason string // default "tool_use" when Content has a tool_use block, else "end_turn"
	Usage      AnthropicUsage

	Delay      time.Duration // wait before the response headers
	EventDelay time.Duration // streaming: wait before each event after message_start
	// CutAfter, when positive, drops the connection (no final chunk, no
	// message_stop) right after that many events were sent.
	CutAfter int
}

// AnthropicFault is an error reply: an HTTP error status with an
// Anthropic-shaped error body, or, with InStream, an HTTP 200 stream that
// carries an SSE error event after message_start.
type AnthropicFault struct {
	Status     int    // default 500
	Type       string // default from Status: 429 rate_limit_error, 529 overloaded_error, …
	Message    string // default from Type
	RetryAfter string // Retry-After header, sent when not empty
	InStream   bool
	Delay      time.Duration // wait before the response headers
}

// AnthropicGarbage is a reply that is not a valid response: Body is sent
// as is.
type AnthropicGarbage struct {
	Status      int    // default 200
	ContentType string // default "text/event-stream"
	Body        string // default an HTML page
}

// AnthropicText returns a reply with one text block whose text is the
// concatenation of deltas, streamed as those deltas (one string is split
// at word boundaries).
func AnthropicText(deltas ...string) AnthropicResponse {
	return AnthropicContent(AnthropicTextBlock(deltas...))
}

// AnthropicToolCall returns a reply with one tool_use block and stop
// reason tool_use; inputJSON is streamed in several input_json_delta
// chunks.
func AnthropicToolCall(id, name, inputJSON string) AnthropicResponse {
	return AnthropicContent(AnthropicToolUseBlock(id, name, inputJSON))
}

// AnthropicContent returns a reply made of blocks.
func AnthropicContent(blocks ...AnthropicBlock) AnthropicResponse {
	return AnthropicResponse{Content: blocks}
}

// WithUsage returns r with usage u.
func (r AnthropicResponse) WithUsage(u AnthropicUsage) AnthropicResponse {
	r.Usage = u
	return r
}

// AnthropicTextBlock returns a text block streamed as deltas (one string
// is split at word boundaries).
func AnthropicTextBlock(deltas ...string) AnthropicBlock {
	b := AnthropicBlock{Type: "text", Text: strings.Join(deltas, "")}
	if len(deltas) > 1 {
		b.Deltas = deltas
	}
	return b
}

// AnthropicToolUseBlock returns a tool_use block.
func AnthropicToolUseBlock(id, name, inputJSON string) AnthropicBlock {
	return AnthropicBlock{Type: "tool_use", ID: id, Name: name, Input: json.RawMessage(inputJSON)}
}

// AnthropicThinkingBlock returns a thinking block with its signature.
func AnthropicThinkingBlock(thinking, signature string) AnthropicBlock {
	return AnthropicBlock{Type: "thinking", Thinking: thinking, Signature: signature}
}

// AnthropicRedactedThinkingBlock returns a redacted_thinking block.
func AnthropicRedactedThinkingBlock(data string) AnthropicBlock {
	return AnthropicBlock{Type: "redacted_thinking", Data: data}
}

// AnthropicScript returns a handler that answers the n-th request with
// replies[n]. A request beyond the script fails the test and gets a 500.
func AnthropicScript(replies ...AnthropicReply) AnthropicHandler {
	var mu sync.Mutex
	next := 0 // guarded by mu
	return func(req *AnthropicRequest) AnthropicReply {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(replies) {
			next++
			return anthExhausted{scripted: len(replies), n: next}
		}
		r := replies[next]
		next++
		return r
	}
}

// anthExhausted is the reply to a request beyond a script.
type anthExhausted struct{ scripted, n int }

func (e anthExhausted) anthServe(s *AnthropicServer, c *anthCall) {
	s.t.Errorf("llmtest: anthropic request %d, but only %d replies are scripted", e.n, e.scripted)
	AnthropicFault{Status: 500, Type: "api_error", Message: "llmtest: script exhausted"}.anthServe(s, c)
}

func (f AnthropicFault) anthServe(s *AnthropicServer, c *anthCall) {
	if !c.sleep(f.Delay) {
		return
	}
	status, typ, msg := f.Status, f.Type, f.Message
	if status == 0 {
		status = 500
	}
	if typ == "" {
		typ = anthErrorType(status)
	}
	if msg == "" {
		msg = anthErrorMessage(typ)
	}
	if f.RetryAfter != "" {
		c.w.Header().Set("Retry-After", f.RetryAfter)
	}
	if f.InStream && c.req.Stream {
		r := AnthropicResponse{}
		c.startStream()
		c.event("message_start", r.startEvent(c))
		c.event("error", anthErrorBody(typ, msg, ""))
		return
	}
	c.json(status, anthErrorBody(typ, msg, c.requestID))
}

func (g AnthropicGarbage) anthServe(s *AnthropicServer, c *anthCall) {
	status, ct, body := g.Status, g.ContentType, g.Body
	if status == 0 {
		status = 200
	}
	if ct == "" {
		ct = "text/event-stream"
	}
	if body == "" {
		body = "<html><body><h1>502 Bad Gateway</h1></body></html>\n"
	}
	c.w.Header().Set("Content-Type", ct)
	c.w.WriteHeader(status)
	c.w.Write([]byte(body))
}

func (r AnthropicResponse) anthServe(s *AnthropicServer, c *anthCall) {
	if !c.sleep(r.Delay) {
		return
	}
	if !c.req.Stream {
		c.json(200, r.message(c))
		return
	}
	c.startStream()
	sent := 0
	send := func(typ string, data any) bool {
		if sent > 0 && !c.sleep(r.EventDelay) {
			return false
		}
		if !c.event(typ, data) {
			return false
		}
		sent++
		if r.CutAfter > 0 && sent >= r.CutAfter {
			c.cut()
		}
		return true
	}
	if !send("message_start", r.startEvent(c)) || !send("ping", map[string]string{"type": "ping"}) {
		return
	}
	for i, b := range r.Content {
		for _, ev := range anthBlockEvents(i, b) {
			if !send(ev.typ, ev.data) {
				return
			}
		}
	}
	usage := r.Usage
	if !send("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": r.stopReason(), "stop_sequence": nil},
		"usage": usage,
	}) {
		return
	}
	send("message_stop", map[string]string{"type": "message_stop"})
}

// message returns the reply as a non-streaming JSON message.
func (r AnthropicResponse) message(c *anthCall) map[string]any {
	content := make([]any, 0, len(r.Content))
	for _, b := range r.Content {
		content = append(content, anthWireBlock(b))
	}
	return map[string]any{
		"id":            r.id(c),
		"type":          "message",
		"role":          "assistant",
		"model":         r.model(c),
		"content":       content,
		"stop_reason":   r.stopReason(),
		"stop_sequence": nil,
		"usage":         r.Usage,
	}
}

func (r AnthropicResponse) startEvent(c *anthCall) map[string]any {
	u := r.Usage
	u.OutputTokens = min(u.OutputTokens, 1)
	return map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id":            r.id(c),
			"type":          "message",
			"role":          "assistant",
			"model":         r.model(c),
			"content":       []any{},
			"stop_reason":   nil,
			"stop_sequence": nil,
			"usage":         u,
		},
	}
}

func (r AnthropicResponse) id(c *anthCall) string {
	if r.ID != "" {
		return r.ID
	}
	return fmt.Sprintf("msg_fake_%d", c.n)
}

func (r AnthropicResponse) model(c *anthCall) string {
	if r.Model != "" {
		return r.Model
	}
	return c.req.Model
}

func (r AnthropicResponse) stopReason() string {
	if r.StopReason != "" {
		return r.StopReason
	}
	for _, b := range r.Content {
		if b.Type == "tool_use" {
			return "tool_use"
		}
	}
	return "end_turn"
}

type anthEvent struct {
	typ  string
	data any
}

// anthBlockEvents returns the content_block_start, _delta and _stop events
// that stream block b at index i, as the real API sends them.
func anthBlockEvents(i int, b AnthropicBlock) []anthEvent {
	start := func(cb any) anthEvent {
		return anthEvent{"content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": cb}}
	}
	delta := func(d map[string]any) anthEvent {
		return anthEvent{"content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d}}
	}
	evs := []anthEvent{}
	switch b.Type {
	case "text":
		evs = append(evs, start(map[string]any{"type": "text", "text": ""}))
		for _, d := range anthDeltas(b.Deltas, b.Text, anthSplitWords) {
			evs = append(evs, delta(map[string]any{"type": "text_delta", "text": d}))
		}
	case "thinking":
		evs = append(evs, start(map[string]any{"type": "thinking", "thinking": "", "signature": ""}))
		for _, d := range anthDeltas(b.Deltas, b.Thinking, anthSplitWords) {
			evs = append(evs, delta(map[string]any{"type": "thinking_delta", "thinking": d}))
		}
		if b.Signature != "" {
			evs = append(evs, delta(map[string]any{"type": "signature_delta", "signature": b.Signature}))
		}
	case "tool_use", "server_tool_use":
		evs = append(evs, start(map[string]any{"type": b.Type, "id": b.ID, "name": b.Name, "input": map[string]any{}}))
		for _, d := range anthDeltas(b.Deltas, string(b.Input), anthSplitJSON) {
			evs = append(evs, delta(map[string]any{"type": "input_json_delta", "partial_json": d}))
		}
	default: // redacted_thinking and anything else arrive whole
		evs = append(evs, start(anthWireBlock(b)))
	}
	return append(evs, anthEvent{"content_block_stop", map[string]any{"type": "content_block_stop", "index": i}})
}

// anthWireBlock returns b as the API encodes a response content block.
func anthWireBlock(b AnthropicBlock) map[string]any {
	switch b.Type {
	case "text":
		return map[string]any{"type": "text", "text": b.Text}
	case "thinking":
		return map[string]any{"type": "thinking", "thinking": b.Thinking, "signature": b.Signature}
	case "redacted_thinking":
		return map[string]any{"type": "redacted_thinking", "data": b.Data}
	case "tool_use", "server_tool_use":
		input := b.Input
		if len(input) == 0 {
			input = json.RawMessage(`{}`)
		}
		return map[string]any{"type": b.Type, "id": b.ID, "name": b.Name, "input": input}
	}
	out := map[string]any{}
	raw, _ := json.Marshal(b)
	json.Unmarshal(raw, &out)
	return out
}

// anthDeltas returns explicit deltas, or whole split by split.
func anthDeltas(explicit []string, whole string, split func(string) []string) []string {
	if explicit != nil {
		return explicit
	}
	return split(whole)
}

// anthSplitWords splits s after each run of spaces, so the pieces
// concatenate back to s.
func anthSplitWords(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		j := i
		for j < len(s) && s[j] == ' ' {
			j++
		}
		out = append(out, s[:j])
		s = s[j:]
	}
	return out
}

// anthSplitJSON splits s as the API streams tool input: an empty first
// delta, then about three pieces cut at rune boundaries.
func anthSplitJSON(s string) []string {
	out := []string{""}
	n := max(1, (len(s)+2)/3)
	for s != "" {
		i := min(n, len(s))
		for i < len(s) && !utf8.RuneStart(s[i]) {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// anthErrorBody returns an Anthropic-shaped error body.
func anthErrorBody(typ, msg, requestID string) map[string]any {
	body := map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}}
	if requestID != "" {
		body["request_id"] = requestID
	}
	return body
}

// anthErrorType returns the error type the API uses for status.
func anthErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 504:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

func anthErrorMessage(typ string) string {
	switch typ {
	case "overloaded_error":
		return "Overloaded"
	case "rate_limit_error":
		return "Number of request tokens has exceeded your per-minute rate limit"
	case "authentication_error":
		return "invalid x-api-key"
	}
	return "Internal server error"
}
