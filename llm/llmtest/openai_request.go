package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// OpenAIRequest is one Chat Completions request as the fake server decoded
// it, with the HTTP details a test may check.
type OpenAIRequest struct {
	// N is the 0-based position of the request among those the server
	// received.
	N int `json:"-"`
	// Path is the URL path: /v1/chat/completions or /chat/completions.
	Path string `json:"-"`
	// Authorization is the Authorization header as sent.
	Authorization string `json:"-"`
	// Body is the raw JSON body.
	Body json.RawMessage `json:"-"`

	Model               string               `json:"model"`
	Messages            []OpenAIMessage      `json:"messages"`
	Tools               []OpenAITool         `json:"tools,omitempty"`
	Stream              bool                 `json:"stream"`
	StreamOptions       *OpenAIStreamOptions `json:"stream_options,omitempty"`
	MaxTokens           *int64               `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int64               `json:"max_completion_tokens,omitempty"`
	Temperature         *float64             `json:"temperature,omitempty"`
	// Stop holds the stop sequences, whether sent as a string or an array.
	Stop OpenAIStop `json:"stop,omitempty"`
}

// IncludeUsage reports whether the request asked for a final usage chunk
// (stream_options.include_usage).
func (r OpenAIRequest) IncludeUsage() bool {
	return r.StreamOptions != nil && r.StreamOptions.IncludeUsage
}

// OpenAIStreamOptions is the stream_options object of a request.
type OpenAIStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// OpenAIMessage is one message of a request. Content holds the text whether
// it was sent as a string or as an array of text parts (joined without a
// separator); Parts counts the array parts (0 for a string); Images holds
// the URLs of its image_url parts, in order.
type OpenAIMessage struct {
	Role       string               `json:"role"`
	Content    string               `json:"content"`
	Parts      int                  `json:"-"`
	Images     []string             `json:"-"`
	Name       string               `json:"name,omitempty"`
	ToolCalls  []OpenAIToolCallItem `json:"tool_calls,omitempty"`
	ToolCallID string               `json:"tool_call_id,omitempty"`
}

// UnmarshalJSON accepts content as null, a string or an array of parts.
func (m *OpenAIMessage) UnmarshalJSON(data []byte) error {
	type plain OpenAIMessage
	var w struct {
		plain
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*m = OpenAIMessage(w.plain)
	m.Content, m.Parts = "", 0
	c := strings.TrimSpace(string(w.Content))
	switch {
	case c == "" || c == "null":
	case strings.HasPrefix(c, `"`):
		return json.Unmarshal(w.Content, &m.Content)
	default:
		var parts []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			ImageURL *struct {
				URL string `json:"url"`
			} `json:"image_url"`
		}
		if err := json.Unmarshal(w.Content, &parts); err != nil {
			return fmt.Errorf("content: %w", err)
		}
		for _, p := range parts {
			m.Content += p.Text
			if p.Type == "image_url" {
				if p.ImageURL == nil || p.ImageURL.URL == "" {
					return fmt.Errorf("content: an image_url part without its url")
				}
				m.Images = append(m.Images, p.ImageURL.URL)
			}
		}
		m.Parts = len(parts)
	}
	return nil
}

// OpenAIToolCallItem is a tool call inside an assistant message of a
// request.
type OpenAIToolCallItem struct {
	ID       string             `json:"id"`
	Type     string             `json:"type"`
	Function OpenAIFunctionCall `json:"function"`
}

// OpenAIFunctionCall is the function of a tool call: its name and its
// arguments as a JSON string.
type OpenAIFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// OpenAITool is one entry of a request's tools.
type OpenAITool struct {
	Type     string         `json:"type"`
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction describes a function tool.
type OpenAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// OpenAIStop is a request's stop field, which the API accepts as a string or
// an array of strings.
type OpenAIStop []string

// UnmarshalJSON accepts a string, an array of strings or null.
func (s *OpenAIStop) UnmarshalJSON(data []byte) error {
	var one string
	if err := json.Unmarshal(data, &one); err == nil {
		*s = OpenAIStop{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(data, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

// oaiDecodeRequest decodes a request body.
func oaiDecodeRequest(body []byte) (OpenAIRequest, error) {
	var r OpenAIRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return OpenAIRequest{}, err
	}
	r.Body = json.RawMessage(body)
	return r, nil
}

// oaiValidate applies the checks the real API makes before answering and
// returns the message it would give, or "" for a valid request.
func oaiValidate(r OpenAIRequest) string {
	switch {
	case r.Model == "":
		return "you must provide a model parameter"
	case len(r.Messages) == 0:
		return "[] is too short - 'messages'"
	case !r.Stream:
		return "llmtest: the fake server only streams; set stream to true"
	}
	for _, t := range r.Tools {
		if t.Type != "function" || t.Function.Name == "" {
			return fmt.Sprintf("invalid tool %+v: want type function with a name", t)
		}
	}
	// An assistant message with tool_calls must be followed by one tool
	// message per call, and tool messages may only answer such calls.
	var open []string // call ids awaiting a tool message
	for i, m := range r.Messages {
		switch m.Role {
		case "system", "developer", "user", "assistant":
			if len(open) > 0 {
				return fmt.Sprintf("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", strings.Join(open, ", "))
			}
			if m.Role != "assistant" {
				if len(m.Images) > 0 && m.Role != "user" {
					return fmt.Sprintf("Invalid 'messages[%d]'. Image URLs are only allowed for messages with role 'user', but this message with role '%s' contains an image URL.", i, m.Role)
				}
				for _, u := range m.Images {
					if msg := oaiValidateImageURL(u); msg != "" {
						return fmt.Sprintf("messages[%d]: %s", i, msg)
					}
				}
				continue
			}
			if len(m.Images) > 0 {
				return fmt.Sprintf("Invalid 'messages[%d]'. Image URLs are only allowed for messages with role 'user', but this message with role 'assistant' contains an image URL.", i)
			}
			for _, c := range m.ToolCalls {
				if c.ID == "" || c.Type != "function" || c.Function.Name == "" {
					return fmt.Sprintf("messages[%d].tool_calls: want id, type function and a name; got %+v", i, c)
				}
				if c.Function.Arguments != "" && !json.Valid([]byte(c.Function.Arguments)) {
					return fmt.Sprintf("messages[%d].tool_calls[%s].function.arguments is not valid JSON", i, c.ID)
				}
				open = append(open, c.ID)
			}
			if m.Content == "" && len(m.ToolCalls) == 0 {
				return fmt.Sprintf("messages[%d]: an assistant message needs content or tool_calls", i)
			}
		case "tool":
			if len(m.Images) > 0 {
				return fmt.Sprintf("Invalid 'messages[%d]'. Image URLs are only allowed for messages with role 'user', but this message with role 'tool' contains an image URL.", i)
			}
			j := slices.Index(open, m.ToolCallID)
			if j < 0 {
				return fmt.Sprintf("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' (messages[%d].tool_call_id %q).", i, m.ToolCallID)
			}
			open = append(open[:j], open[j+1:]...)
		default:
			return fmt.Sprintf("messages[%d].role: invalid value %q", i, m.Role)
		}
	}
	if len(open) > 0 {
		return fmt.Sprintf("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", strings.Join(open, ", "))
	}
	return ""
}

// oaiValidateImageURL checks an image_url: an http(s) URL, or a data URL
// of a supported image type whose base64 decodes to a picture of it.
func oaiValidateImageURL(u string) string {
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return ""
	}
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "Invalid image URL: want http(s) or a data URL"
	}
	mediaType, data, ok := strings.Cut(rest, ";base64,")
	if !ok {
		return "Invalid image URL: a data URL must be base64 (data:<type>;base64,<data>)"
	}
	switch mediaType {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
	default:
		return fmt.Sprintf("Invalid MIME type %q: only image/jpeg, image/png, image/gif and image/webp are supported", mediaType)
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil || len(b) == 0 {
		return "Invalid image data: not base64"
	}
	if got := http.DetectContentType(b); got != mediaType {
		return fmt.Sprintf("Invalid image data: the data URL says %s but the bytes are %s", mediaType, got)
	}
	return ""
}
