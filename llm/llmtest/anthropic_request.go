package llmtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// AnthropicRequest is one Messages API request as the fake server received
// and decoded it. String forms the API allows (a string system prompt, a
// string message content, a string tool_result content) are normalized to
// blocks, so tests inspect one shape.
type AnthropicRequest struct {
	Method string
	Path   string     // "/v1/messages"
	Query  url.Values // Claude Code sends beta=true
	Header http.Header
	Body   []byte // the raw JSON body

	Model         string
	MaxTokens     int
	Stream        bool
	System        []AnthropicBlock
	Messages      []AnthropicMessage // roles user, assistant and system
	Tools         []AnthropicTool
	Thinking      *AnthropicThinking
	Temperature   *float64
	StopSequences []string
}

// AnthropicMessage is one message of a request.
type AnthropicMessage struct {
	Role    string           `json:"role"` // "user", "assistant" or "system"
	Content []AnthropicBlock `json:"content"`
}

// AnthropicBlock is a content block, of a request or of a scripted reply.
// Which fields are set depends on Type:
//   - text: Text
//   - tool_use: ID, Name, Input
//   - tool_result: ToolUseID, Content (raw), Text (the text of Content),
//     Inner (the blocks of Content: text and image), IsError
//   - image: Source
//   - thinking: Thinking, Signature
//   - redacted_thinking: Data
type AnthropicBlock struct {
	Type         string                 `json:"type"`
	Text         string                 `json:"text,omitempty"`
	ID           string                 `json:"id,omitempty"`
	Name         string                 `json:"name,omitempty"`
	Input        json.RawMessage        `json:"input,omitempty"`
	ToolUseID    string                 `json:"tool_use_id,omitempty"`
	Content      json.RawMessage        `json:"content,omitempty"`
	IsError      bool                   `json:"is_error,omitempty"`
	Thinking     string                 `json:"thinking,omitempty"`
	Signature    string                 `json:"signature,omitempty"`
	Data         string                 `json:"data,omitempty"`
	CacheControl *AnthropicCacheControl `json:"cache_control,omitempty"`
	Source       *AnthropicImageSource  `json:"source,omitempty"`

	// Inner is a tool_result's content as blocks (requests only).
	Inner []AnthropicBlock `json:"-"`
	// Raw is the block as the client sent it (requests only).
	Raw json.RawMessage `json:"-"`
	// Deltas, in a scripted reply, are the pieces a text, thinking or
	// tool_use block is streamed in; they must concatenate to its Text,
	// Thinking or Input. Nil means an automatic split.
	Deltas []string `json:"-"`
}

// AnthropicImageSource is the source of an image block.
type AnthropicImageSource struct {
	Type      string `json:"type"` // "base64" or "url"
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"` // base64
	URL       string `json:"url,omitempty"`
}

// Images returns the image blocks of r's messages, those inside tool
// results included, in request order.
func (r AnthropicRequest) Images() []AnthropicBlock {
	var out []AnthropicBlock
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == "image" {
				out = append(out, b)
			}
			for _, ib := range b.Inner {
				if ib.Type == "image" {
					out = append(out, ib)
				}
			}
		}
	}
	return out
}

// AnthropicCacheControl is a cache_control marker.
type AnthropicCacheControl struct {
	Type string `json:"type"`          // "ephemeral"
	TTL  string `json:"ttl,omitempty"` // "5m", "1h" or empty
}

// AnthropicTool is a tool definition of a request.
type AnthropicTool struct {
	Type         string                 `json:"type,omitempty"`
	Name         string                 `json:"name"`
	Description  string                 `json:"description,omitempty"`
	InputSchema  json.RawMessage        `json:"input_schema,omitempty"`
	CacheControl *AnthropicCacheControl `json:"cache_control,omitempty"`
	// MaxUses, AllowedDomains and BlockedDomains configure a server-side
	// web search tool (Type "web_search_20250305").
	MaxUses        int      `json:"max_uses,omitempty"`
	AllowedDomains []string `json:"allowed_domains,omitempty"`
	BlockedDomains []string `json:"blocked_domains,omitempty"`
}

// AnthropicThinking is the thinking configuration of a request.
type AnthropicThinking struct {
	Type         string `json:"type"` // "enabled", "adaptive", "disabled"
	BudgetTokens int    `json:"budget_tokens,omitempty"`
	Display      string `json:"display,omitempty"`
}

// APIKey returns the credential of r: its x-api-key header (Claude Code),
// or else its Authorization bearer token (the Go SDK sends the API key
// that way).
func (r AnthropicRequest) APIKey() string {
	if k := r.Header.Get("X-Api-Key"); k != "" {
		return k
	}
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(tok)
	}
	return ""
}

// LastMessage returns the last message of r, or a zero message.
func (r AnthropicRequest) LastMessage() AnthropicMessage {
	if len(r.Messages) == 0 {
		return AnthropicMessage{}
	}
	return r.Messages[len(r.Messages)-1]
}

// CacheBreakpoints lists where r carries cache_control markers, in request
// order, as "tools[i]", "system[i]" and "messages[i].content[j]".
func (r AnthropicRequest) CacheBreakpoints() []string {
	var out []string
	for i, t := range r.Tools {
		if t.CacheControl != nil {
			out = append(out, fmt.Sprintf("tools[%d]", i))
		}
	}
	for i, b := range r.System {
		if b.CacheControl != nil {
			out = append(out, fmt.Sprintf("system[%d]", i))
		}
	}
	for i, m := range r.Messages {
		for j, b := range m.Content {
			if b.CacheControl != nil {
				out = append(out, fmt.Sprintf("messages[%d].content[%d]", i, j))
			}
		}
	}
	return out
}

// anthWireRequest is the body of a Messages API request, with the fields
// that have several shapes left raw.
type anthWireRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools         []AnthropicTool    `json:"tools"`
	Thinking      *AnthropicThinking `json:"thinking"`
	Temperature   *float64           `json:"temperature"`
	StopSequences []string           `json:"stop_sequences"`
}

// anthDecodeRequest decodes a request body. It fails on malformed JSON and
// on content of the wrong shape.
func anthDecodeRequest(body []byte) (AnthropicRequest, error) {
	var w anthWireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return AnthropicRequest{}, err
	}
	r := AnthropicRequest{
		Model:         w.Model,
		MaxTokens:     w.MaxTokens,
		Stream:        w.Stream,
		Tools:         w.Tools,
		Thinking:      w.Thinking,
		Temperature:   w.Temperature,
		StopSequences: w.StopSequences,
		Body:          body,
	}
	var err error
	if r.System, err = anthDecodeContent(w.System); err != nil {
		return AnthropicRequest{}, fmt.Errorf("system: %w", err)
	}
	for i, m := range w.Messages {
		content, err := anthDecodeContent(m.Content)
		if err != nil {
			return AnthropicRequest{}, fmt.Errorf("messages.%d.content: %w", i, err)
		}
		r.Messages = append(r.Messages, AnthropicMessage{Role: m.Role, Content: content})
	}
	return r, nil
}

// anthDecodeContent decodes content that is a string, an array of blocks,
// or absent.
func anthDecodeContent(raw json.RawMessage) ([]AnthropicBlock, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []AnthropicBlock{{Type: "text", Text: s}}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("want a string or an array of blocks: %w", err)
	}
	blocks := make([]AnthropicBlock, 0, len(items))
	for i, item := range items {
		var b AnthropicBlock
		if err := json.Unmarshal(item, &b); err != nil {
			return nil, fmt.Errorf("%d: %w", i, err)
		}
		if b.Type == "" {
			return nil, fmt.Errorf("%d: block has no type", i)
		}
		b.Raw = item
		if b.Type == "tool_result" {
			inner, err := anthDecodeContent(b.Content)
			if err != nil {
				return nil, fmt.Errorf("%d.content: %w", i, err)
			}
			for _, ib := range inner {
				b.Text += ib.Text
			}
			b.Inner = inner
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// anthValidate checks r as the real API would, in part, and returns the
// message of an invalid_request_error, or "".
func anthValidate(r AnthropicRequest) string {
	switch {
	case r.Model == "":
		return "model: field required"
	case r.MaxTokens <= 0:
		return "max_tokens: field required"
	case len(r.Messages) == 0:
		return "messages: at least one message is required"
	}
	for i, m := range r.Messages {
		switch m.Role {
		case "user", "assistant", "system":
		default:
			return fmt.Sprintf("messages.%d.role: unexpected role %q", i, m.Role)
		}
		for j, b := range m.Content {
			if b.Type == "text" && b.Text == "" {
				return fmt.Sprintf("messages.%d.content.%d: text content blocks must be non-empty", i, j)
			}
			if b.Type == "tool_use" && !json.Valid(b.Input) {
				return fmt.Sprintf("messages.%d.content.%d.input: want a JSON object", i, j)
			}
			if b.Type == "image" {
				if msg := anthValidateImage(b); msg != "" {
					return fmt.Sprintf("messages.%d.content.%d.%s", i, j, msg)
				}
			}
			for k, ib := range b.Inner {
				switch ib.Type {
				case "text", "document", "search_result", "tool_reference": // what the API takes besides images (Claude Code's ToolSearch answers with tool_reference)
				case "image":
					if msg := anthValidateImage(ib); msg != "" {
						return fmt.Sprintf("messages.%d.content.%d.content.%d.%s", i, j, k, msg)
					}
				default:
					return fmt.Sprintf("messages.%d.content.%d.content.%d.type: unexpected %q in a tool_result", i, j, k, ib.Type)
				}
			}
		}
	}
	for i, t := range r.Tools {
		if msg := anthValidateTool(t); msg != "" {
			return fmt.Sprintf("tools.%d.%s", i, msg)
		}
	}
	if n := len(r.Images()); n > 100 {
		return fmt.Sprintf("messages: too many images: %d > 100 (the maximum per request)", n)
	}
	if n := len(r.CacheBreakpoints()); n > 4 {
		return fmt.Sprintf("A maximum of 4 blocks with cache_control may be provided. Found %d.", n)
	}
	return ""
}

// anthMaxImage is the API's limit on an image's base64 data.
const anthMaxImage = 5 << 20

// anthValidateImage checks an image block as the API does: a base64
// source of a supported media type whose data decodes, is at most 5 MB,
// and is a picture of that type. It returns the message's tail, or "".
func anthValidateImage(b AnthropicBlock) string {
	src := b.Source
	switch {
	case src == nil:
		return "source: field required"
	case src.Type != "base64":
		return fmt.Sprintf("source.type: the fake server takes base64 sources, got %q", src.Type)
	}
	switch src.MediaType {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
	default:
		return fmt.Sprintf("source.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp', got %q", src.MediaType)
	}
	if len(src.Data) > anthMaxImage {
		return fmt.Sprintf("source.base64: image exceeds 5 MB maximum: %d bytes > %d bytes", len(src.Data), anthMaxImage)
	}
	data, err := base64.StdEncoding.DecodeString(src.Data)
	if err != nil || len(data) == 0 {
		return "source.base64.data: invalid base64 data"
	}
	if got := http.DetectContentType(data); got != src.MediaType {
		return fmt.Sprintf("source.base64.data: the image was specified using the %s media type, but the image appears to be a %s image", src.MediaType, got)
	}
	return ""
}
