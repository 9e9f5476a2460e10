package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/troupe-dev/troupe/llm"
)

// textSeparator joins the text blocks of one message, which the API takes
// as one string (the form every compatible server accepts).
const textSeparator = "\n\n"

// params translates req into Chat Completions parameters. It does no I/O.
func (m *Model) params(req llm.Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{
		Model:         req.Model,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if p.Model == "" {
		p.Model = m.model
	}
	if req.WebSearch != nil {
		return p, fmt.Errorf("openai: %w", llm.ErrNoWebSearch)
	}
	if sys := strings.TrimSpace(req.System + "\n\n" + req.SystemVolatile); sys != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(sys))
	}
	for i, msg := range llm.TrimImages(req.Messages, llm.MaxRequestImages, llm.MaxRequestImageBytes) {
		ms, err := messages(msg, m.textOnly)
		if err != nil {
			return p, fmt.Errorf("openai: message %d: %w", i, err)
		}
		p.Messages = append(p.Messages, ms...)
	}
	for _, t := range req.Tools {
		tool, err := functionTool(t)
		if err != nil {
			return p, fmt.Errorf("openai: %w", err)
		}
		p.Tools = append(p.Tools, tool)
	}
	if n := req.MaxTokens; n > 0 || m.maxTokens > 0 {
		if n <= 0 {
			n = m.maxTokens
		}
		if m.official {
			p.MaxCompletionTokens = openai.Int(int64(n))
		} else {
			p.MaxTokens = openai.Int(int64(n))
		}
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if len(req.StopSequences) > 0 {
		p.Stop.OfStringArray = req.StopSequences
	}
	return p, nil
}

// messages translates one conversation message into API messages. The
// images of tool results go in the user message after the tool messages,
// or, when textOnly, stay a description in the tool message.
func messages(msg llm.Message, textOnly bool) ([]openai.ChatCompletionMessageParamUnion, error) {
	var out []openai.ChatCompletionMessageParamUnion
	var texts []string
	switch msg.Role {
	case llm.RoleUser:
		var pictures []openai.ChatCompletionContentPartUnionParam
		for _, b := range msg.Content {
			switch b.Type {
			case llm.BlockText:
				texts = append(texts, b.Text)
			case llm.BlockToolResult:
				content := b.Text
				if b.IsError {
					content = "Error: " + content
				}
				parts, note, err := imageParts(b, textOnly)
				if err != nil {
					return nil, err
				}
				pictures = append(pictures, parts...)
				if note != "" {
					content = strings.TrimPrefix(content+"\n"+note, "\n")
				}
				out = append(out, openai.ToolMessage(content, b.ToolUseID))
			case llm.BlockThinking, llm.BlockRedactedThinking, llm.BlockServerToolUse, llm.BlockWebSearchResult:
			default:
				return nil, fmt.Errorf("user %s block: not supported", b.Type)
			}
		}
		switch {
		case len(pictures) > 0:
			for _, t := range texts {
				pictures = append(pictures, openai.TextContentPart(t))
			}
			out = append(out, openai.UserMessage(pictures))
		case len(texts) > 0:
			out = append(out, openai.UserMessage(strings.Join(texts, textSeparator)))
		}
	case llm.RoleAssistant:
		var a openai.ChatCompletionAssistantMessageParam
		for _, b := range msg.Content {
			switch b.Type {
			case llm.BlockText:
				texts = append(texts, b.Text)
			case llm.BlockToolUse:
				args := string(bytes.TrimSpace(b.Input))
				if args == "" {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       b.ToolUseID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: args},
					},
				})
			case llm.BlockThinking, llm.BlockRedactedThinking, llm.BlockServerToolUse, llm.BlockWebSearchResult:
			default:
				return nil, fmt.Errorf("assistant %s block: not supported", b.Type)
			}
		}
		if len(texts) > 0 {
			a.Content.OfString = openai.String(strings.Join(texts, textSeparator))
		}
		if len(texts) == 0 && len(a.ToolCalls) == 0 {
			return nil, nil // only thinking: nothing the API can take
		}
		out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
	default:
		return nil, fmt.Errorf("role %q: not supported", msg.Role)
	}
	return out, nil
}

// imageParts returns the parts that carry the images of tool result b
// in a user message (a text part naming the call, then one image_url part
// a picture) and the note its tool message gets. With textOnly there are
// no parts and the note describes each picture.
func imageParts(b llm.Block, textOnly bool) ([]openai.ChatCompletionContentPartUnionParam, string, error) {
	if len(b.Images) == 0 {
		return nil, "", nil
	}
	var note strings.Builder
	if textOnly {
		sep := ""
		for _, im := range b.Images {
			note.WriteString(sep + im.String())
			sep = "\n"
		}
		return nil, note.String(), nil
	}
	parts := []openai.ChatCompletionContentPartUnionParam{
		openai.TextContentPart(fmt.Sprintf("The %d image(s) returned by tool call %s:", len(b.Images), b.ToolUseID)),
	}
	for k, im := range b.Images {
		if err := im.Check(); err != nil {
			return nil, "", fmt.Errorf("tool result %s: image %d: %w", b.ToolUseID, k, err)
		}
		url := "data:" + im.MediaType + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
		parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url}))
	}
	fmt.Fprintf(&note, "[%d image(s) follow in the next user message]", len(b.Images))
	return parts, note.String(), nil
}

// emptySchema is the parameters of a tool without an input schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// functionTool translates a tool spec into a function tool.
func functionTool(t llm.ToolSpec) (openai.ChatCompletionToolUnionParam, error) {
	schema := t.InputSchema
	if len(bytes.TrimSpace(schema)) == 0 {
		schema = emptySchema
	}
	var params shared.FunctionParameters
	if err := json.Unmarshal(schema, &params); err != nil || params == nil {
		return openai.ChatCompletionToolUnionParam{}, fmt.Errorf("tool %q: input schema is not a JSON object", t.Name)
	}
	def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
	if t.Description != "" {
		def.Description = openai.String(t.Description)
	}
	return openai.ChatCompletionFunctionTool(def), nil
}
