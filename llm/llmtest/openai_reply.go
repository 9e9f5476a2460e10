package llmtest

import (
	"net/http"
	"sync"
	"time"
)

// OpenAIHandler decides the fake server's answer to a valid, authorized
// request. It runs on a server goroutine: it may call t.Errorf but not
// t.Fatal.
type OpenAIHandler func(req OpenAIRequest) OpenAIReply

// OpenAIReply is the fake server's answer to one request: a streamed
// completion, or a fault.
//
// A completion streams, one SSE event per chunk: a role chunk, Reasoning,
// Text and Refusal in pieces of ChunkSize runes, then each tool call (a
// first chunk with its index, id, type and name, then its arguments in
// pieces), a finish chunk, a usage chunk when the request set
// stream_options.include_usage (unless OmitUsage), and data: [DONE].
type OpenAIReply struct {
	ID        string // completion id; default "chatcmpl-<request number>"
	Model     string // model reported in chunks; default the requested one
	Reasoning string // streamed as delta.reasoning_content, as vLLM and DeepSeek do
	Text      string
	Refusal   string
	ToolCalls []OpenAICall
	// FinishReason defaults to "tool_calls" when there are tool calls and
	// to "stop" otherwise.
	FinishReason string
	Usage        OpenAIUsage
	// OmitUsage leaves out the usage chunk even when the request asked for
	// it, like servers that ignore stream_options.
	OmitUsage bool
	// ChunkSize is the number of runes of text or arguments per chunk;
	// default 4.
	ChunkSize int
	// Delay is waited before the response and before each event; the wait
	// ends early when the client goes away.
	Delay time.Duration

	// Status, when non-zero, answers with that HTTP status and an OpenAI
	// error body made of ErrorType, ErrorCode and ErrorMessage (defaults
	// depend on the status), or ErrorBody verbatim when set.
	Status       int
	ErrorType    string
	ErrorCode    string
	ErrorMessage string
	ErrorBody    string
	// RetryAfter and RetryAfterMs set the retry-after and retry-after-ms
	// headers of any reply.
	RetryAfter   string
	RetryAfterMs string

	// CutAfter, when positive, drops the connection after that many data
	// events, without [DONE] or the end of the chunked body.
	CutAfter int
	// StreamError sends an in-stream error event ({"error": {...}} made of
	// ErrorType, ErrorCode and ErrorMessage) after StreamErrorAfter data
	// events, and ends the stream there.
	StreamError      bool
	StreamErrorAfter int
	// Raw, when set, is the whole body of a 200 text/event-stream answer:
	// for garbage and hand-made streams.
	Raw string

	unexpected int // n+1 when a script of n replies got one request too many
}

// OpenAICall is a tool call of a scripted reply. Arguments is streamed in
// pieces as is, valid JSON or not.
type OpenAICall struct {
	ID        string
	Name      string
	Arguments string
}

// OpenAIUsage is the usage a reply reports. The prompt count includes the
// cached tokens, as the API counts them.
type OpenAIUsage struct {
	PromptTokens     int64
	CompletionTokens int64
	CachedTokens     int64
}

// OpenAIText returns a reply streaming text and finishing with "stop".
func OpenAIText(text string) OpenAIReply { return OpenAIReply{Text: text} }

// OpenAIToolCall returns a reply with one tool call, finishing with
// "tool_calls".
func OpenAIToolCall(id, name, args string) OpenAIReply {
	return OpenAIReply{ToolCalls: []OpenAICall{{ID: id, Name: name, Arguments: args}}}
}

// OpenAIToolCalls returns a reply with several (parallel) tool calls.
func OpenAIToolCalls(calls ...OpenAICall) OpenAIReply { return OpenAIReply{ToolCalls: calls} }

// OpenAIError returns a reply answering with an HTTP error status and an
// OpenAI error body; an empty typ or msg takes the status's default.
func OpenAIError(status int, typ, msg string) OpenAIReply {
	return OpenAIReply{Status: status, ErrorType: typ, ErrorMessage: msg}
}

// OpenAIGarbage returns a reply whose 200 event stream carries data that is
// not JSON.
func OpenAIGarbage() OpenAIReply {
	return OpenAIReply{Raw: "data: <html><body>502 Bad Gateway</body></html>\n\n"}
}

// OpenAIScript returns a handler answering the i-th request it sees with
// replies[i]. A request past the end fails the test and gets a 400 error,
// which clients do not retry.
func OpenAIScript(replies ...OpenAIReply) OpenAIHandler {
	var mu sync.Mutex
	next := 0 // guarded by mu
	return func(req OpenAIRequest) OpenAIReply {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(replies) {
			r := OpenAIError(http.StatusBadRequest, "invalid_request_error", "llmtest: unexpected request")
			r.unexpected = len(replies) + 1
			return r
		}
		r := replies[next]
		next++
		return r
	}
}
