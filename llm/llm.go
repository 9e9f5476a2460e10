// Package llm is the provider-neutral vocabulary of model conversations:
// messages made of content blocks (text, tool use, tool result with its
// pictures, thinking),
// requests with tool specs, usage with cache reads and writes, stop reasons,
// streaming events, and the Model interface every provider implements.
//
// The types are plain values that encode to JSON (for transcripts) and are
// safe to copy; nothing in this package does I/O.
package llm

import (
	"context"
	"encoding/json"
	"iter"
)

// Role is who wrote a message.
type Role string

// Roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// BlockType is the kind of a content block.
type BlockType string

// Block types.
const (
	BlockText             BlockType = "text"
	BlockToolUse          BlockType = "tool_use"
	BlockToolResult       BlockType = "tool_result"
	BlockThinking         BlockType = "thinking"
	BlockRedactedThinking BlockType = "redacted_thinking"
)

// Block is one piece of a message. Which fields are set depends on Type:
//   - text: Text
//   - tool_use: ToolUseID, Name, Input
//   - tool_result: ToolUseID, Text (the result), Images (pictures the
//     tool returned, after the text), IsError
//   - thinking: Text, Signature
//   - redacted_thinking: Data
//   - server_tool_use: ToolUseID, Name, Input (a tool the provider ran
//     itself, such as its web search; websearch.go)
//   - web_search_tool_result: ToolUseID, Results, or IsError with Text
//     the provider's error code
type Block struct {
	Type      BlockType       `json:"type"`
	Text      string          `json:"text,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	Images    []Image         `json:"images,omitempty"`
	// Results are a web_search_tool_result's hits (websearch.go).
	Results []SearchResult `json:"results,omitempty"`
}

// Text returns a text block.
func Text(s string) Block { return Block{Type: BlockText, Text: s} }

// ToolUse returns a tool-use block.
func ToolUse(id, name string, input json.RawMessage) Block {
	return Block{Type: BlockToolUse, ToolUseID: id, Name: name, Input: input}
}

// ToolResult returns a tool-result block.
func ToolResult(toolUseID, content string, isError bool) Block {
	return Block{Type: BlockToolResult, ToolUseID: toolUseID, Text: content, IsError: isError}
}

// Message is one turn of the conversation.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// UserText returns a user message holding one text block.
func UserText(s string) Message { return Message{Role: RoleUser, Content: []Block{Text(s)}} }

// Text returns the concatenated text blocks of m.
func (m Message) Text() string {
	var s string
	for _, b := range m.Content {
		if b.Type == BlockText {
			s += b.Text
		}
	}
	return s
}

// ToolUses returns the tool-use blocks of m, in order.
func (m Message) ToolUses() []Block {
	var out []Block
	for _, b := range m.Content {
		if b.Type == BlockToolUse {
			out = append(out, b)
		}
	}
	return out
}

// StopReason says why the model stopped.
type StopReason string

// Stop reasons.
const (
	StopEndTurn      StopReason = "end_turn"
	StopMaxTokens    StopReason = "max_tokens"
	StopToolUse      StopReason = "tool_use"
	StopSequence     StopReason = "stop_sequence"
	StopPauseTurn    StopReason = "pause_turn"
	StopRefusal      StopReason = "refusal"
	StopContextLimit StopReason = "model_context_window_exceeded"
)

// Usage counts tokens. InputTokens excludes cache reads and writes, as the
// Anthropic API reports it; TotalInput adds them back.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_input_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_creation_input_tokens,omitempty"`
}

// TotalInput returns every input token, cached or not.
func (u Usage) TotalInput() int64 { return u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens }

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.InputTokens + v.InputTokens, u.OutputTokens + v.OutputTokens,
		u.CacheReadTokens + v.CacheReadTokens, u.CacheWriteTokens + v.CacheWriteTokens}
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Request is one model call.
type Request struct {
	Model  string // provider model id; empty means the provider's default
	System string
	// SystemVolatile follows System, after its prompt-cache breakpoint:
	// the part of the system prompt that changes between runs (the date,
	// the git state), so that it does not invalidate the cached prefix.
	SystemVolatile string
	Messages       []Message
	Tools          []ToolSpec
	MaxTokens      int // 0 means the provider's default
	// Temperature, when non-nil, overrides the provider default.
	Temperature *float64
	// ThinkingBudget, when positive, enables extended thinking with that
	// many tokens, where the provider supports it.
	ThinkingBudget int
	StopSequences  []string
	// NoCache turns prompt caching off where the provider does it.
	NoCache bool
	// WebSearch, when set, offers the model the provider's own web search
	// (websearch.go); providers without one fail the call with
	// ErrNoWebSearch.
	WebSearch *WebSearch
}

// Response is a complete model answer.
type Response struct {
	ID         string
	Model      string
	Message    Message // role assistant
	StopReason StopReason
	Usage      Usage
}

// EventType is the kind of a streaming event.
type EventType string

// Event types. A stream yields any number of deltas and ends with exactly
// one EventDone carrying the complete Response, unless it fails.
const (
	EventText      EventType = "text"       // Text holds a text delta of block Index
	EventThinking  EventType = "thinking"   // Text holds a thinking delta
	EventToolStart EventType = "tool_start" // Block holds the tool_use block's id and name
	EventToolInput EventType = "tool_input" // Text holds a partial JSON delta of the tool input
	EventBlockStop EventType = "block_stop" // block Index is complete
	EventRetry     EventType = "retry"      // the provider is retrying; Err says why
	EventDone      EventType = "done"       // Response is complete
)

// Event is one streaming event.
type Event struct {
	Type     EventType
	Index    int
	Text     string
	Block    *Block
	Err      error
	Response *Response
}

// Model is a streaming model provider. Implementations are safe for
// concurrent use.
type Model interface {
	// Stream sends req and yields its events. The sequence ends after
	// EventDone, or with a non-nil error (an *APIError for errors the
	// server reported). Canceling ctx aborts the call; the sequence then
	// ends with an error wrapping context.Cause(ctx).
	Stream(ctx context.Context, req Request) iter.Seq2[Event, error]
	// Info describes the model.
	Info() Info
}

// Info describes a provider and its model.
type Info struct {
	Provider      string // "anthropic", "openai", "scripted"
	Model         string // default model id
	ContextWindow int    // tokens; 0 when unknown
}

// Complete drains a stream and returns its Response.
func Complete(ctx context.Context, m Model, req Request) (Response, error) {
	for ev, err := range m.Stream(ctx, req) {
		if err != nil {
			return Response{}, err
		}
		if ev.Type == EventDone && ev.Response != nil {
			return *ev.Response, nil
		}
	}
	return Response{}, ErrNoResponse
}
