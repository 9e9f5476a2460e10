package anthropic

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/troupe-dev/troupe/llm"
)

// roleSystem is the role of a mid-conversation system message, which the
// Messages API accepts and the llm vocabulary does not name.
const roleSystem llm.Role = "system"

// minThinkingBudget is the smallest budget_tokens the API accepts.
const minThinkingBudget = 1024

// params converts req to SDK parameters, plus the request options for
// fields the SDK no longer models.
func (m *Model) params(req llm.Request) (anthropic.MessageNewParams, []option.RequestOption, error) {
	p := anthropic.MessageNewParams{
		Model:         cmp.Or(req.Model, m.model),
		MaxTokens:     int64(cmp.Or(req.MaxTokens, m.maxTokens)),
		StopSequences: req.StopSequences,
	}
	cache := !req.NoCache
	if req.System != "" {
		sys := anthropic.TextBlockParam{Text: req.System}
		if cache {
			sys.CacheControl = anthropic.NewCacheControlEphemeralParam()
		}
		p.System = []anthropic.TextBlockParam{sys}
	}
	if req.SystemVolatile != "" {
		p.System = append(p.System, anthropic.TextBlockParam{Text: req.SystemVolatile})
	}
	for i, t := range req.Tools {
		tp, err := toolParam(t)
		if err != nil {
			return p, nil, fmt.Errorf("anthropic: tool %q: %w", t.Name, err)
		}
		if cache && i == len(req.Tools)-1 {
			tp.CacheControl = anthropic.NewCacheControlEphemeralParam()
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tp})
	}
	if ws := req.WebSearch; ws != nil {
		if len(ws.AllowedDomains) > 0 && len(ws.BlockedDomains) > 0 {
			return p, nil, errors.New("anthropic: web search: allowed and blocked domains cannot both be set")
		}
		wp := &anthropic.WebSearchTool20250305Param{AllowedDomains: ws.AllowedDomains, BlockedDomains: ws.BlockedDomains}
		if ws.MaxUses > 0 {
			wp.MaxUses = anthropic.Int(int64(ws.MaxUses))
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfWebSearchTool20250305: wp})
	}
	for i, msg := range llm.TrimImages(req.Messages, llm.MaxRequestImages, llm.MaxRequestImageBytes) {
		mp, err := messageParam(msg)
		if err != nil {
			return p, nil, fmt.Errorf("anthropic: message %d: %w", i, err)
		}
		p.Messages = append(p.Messages, mp)
	}
	if cache {
		// Three breakpoints at most (system, tools, conversation): the
		// API allows four.
		markLastBlock(p.Messages)
	}
	if req.ThinkingBudget > 0 {
		if adaptiveThinking(p.Model) {
			// Current models think adaptively and reject a budget.
			p.Thinking = anthropic.ThinkingConfigParamUnion{OfAdaptive: &anthropic.ThinkingConfigAdaptiveParam{
				Display: anthropic.ThinkingConfigAdaptiveDisplaySummarized,
			}}
		} else {
			budget := int64(max(req.ThinkingBudget, minThinkingBudget))
			if p.MaxTokens <= budget { // the API wants budget < max_tokens
				p.MaxTokens += budget
			}
			p.Thinking = anthropic.ThinkingConfigParamOfEnabled(budget)
		}
	}
	var opts []option.RequestOption
	if req.Temperature != nil {
		// SDK v2 dropped the field; the API still takes it on older models.
		opts = append(opts, option.WithJSONSet("temperature", *req.Temperature))
	}
	return p, opts, nil
}

// toolParam converts a tool spec; its input schema is sent verbatim.
func toolParam(t llm.ToolSpec) (anthropic.ToolParam, error) {
	tp := anthropic.ToolParam{Name: t.Name}
	if t.Description != "" {
		tp.Description = anthropic.String(t.Description)
	}
	if len(t.InputSchema) > 0 {
		if !json.Valid(t.InputSchema) {
			return tp, errors.New("input schema is not valid JSON")
		}
		tp.InputSchema = param.Override[anthropic.ToolInputSchemaParam](json.RawMessage(t.InputSchema))
	}
	return tp, nil
}

// messageParam converts one message. Empty text blocks, which the API
// rejects, are dropped.
func messageParam(msg llm.Message) (anthropic.MessageParam, error) {
	if msg.Role == roleSystem {
		var texts []anthropic.TextBlockParam
		for j, b := range msg.Content {
			if b.Type != llm.BlockText {
				return anthropic.MessageParam{}, fmt.Errorf("block %d: system message holds a %s block", j, b.Type)
			}
			if b.Text != "" {
				texts = append(texts, anthropic.TextBlockParam{Text: b.Text})
			}
		}
		return anthropic.MessageParam{OfSystem: &anthropic.SystemMessageParam{Content: texts}}, nil
	}
	blocks := make([]anthropic.ContentBlockParamUnion, 0, len(msg.Content))
	for j, b := range msg.Content {
		bp, ok, err := blockParam(b)
		if err != nil {
			return anthropic.MessageParam{}, fmt.Errorf("block %d: %w", j, err)
		}
		if ok {
			blocks = append(blocks, bp)
		}
	}
	switch msg.Role {
	case llm.RoleUser:
		return anthropic.MessageParam{OfUser: &anthropic.UserMessageParam{Content: blocks}}, nil
	case llm.RoleAssistant:
		return anthropic.MessageParam{OfAssistant: &anthropic.AssistantMessageParam{Content: blocks}}, nil
	}
	return anthropic.MessageParam{}, fmt.Errorf("unknown role %q", msg.Role)
}

// blockParam converts one content block; ok is false for a block to drop.
func blockParam(b llm.Block) (p anthropic.ContentBlockParamUnion, ok bool, err error) {
	switch b.Type {
	case llm.BlockText:
		if b.Text == "" {
			return p, false, nil
		}
		p.OfText = &anthropic.TextBlockParam{Text: b.Text}
	case llm.BlockToolUse:
		input := b.Input
		if len(strings.TrimSpace(string(input))) == 0 {
			input = json.RawMessage(`{}`)
		}
		if !json.Valid(input) {
			return p, false, fmt.Errorf("tool_use %s (%s): input is not valid JSON", b.ToolUseID, b.Name)
		}
		p.OfToolUse = &anthropic.ToolUseBlockParam{ID: b.ToolUseID, Name: b.Name, Input: input}
	case llm.BlockToolResult:
		tr := &anthropic.ToolResultBlockParam{ToolUseID: b.ToolUseID}
		if b.IsError {
			tr.IsError = anthropic.Bool(true)
		}
		if b.Text != "" {
			tr.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: b.Text}}}
		}
		for k, im := range b.Images {
			ip, err := imageParam(im)
			if err != nil {
				return p, false, fmt.Errorf("tool_result %s: image %d: %w", b.ToolUseID, k, err)
			}
			tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: ip})
		}
		p.OfToolResult = tr
	case llm.BlockThinking:
		p.OfThinking = &anthropic.ThinkingBlockParam{Thinking: b.Text, Signature: b.Signature}
	case llm.BlockRedactedThinking:
		p.OfRedactedThinking = &anthropic.RedactedThinkingBlockParam{Data: b.Data}
	case llm.BlockServerToolUse, llm.BlockWebSearchResult:
		// A server tool's call and result are kept for the record only:
		// the result's encrypted content, which the API wants back, is
		// not, so they are not sent again.
		return p, false, nil
	default:
		return p, false, fmt.Errorf("unknown block type %q", b.Type)
	}
	return p, true, nil
}

// imageParam converts an image to a base64 image block, the form a
// tool_result's content takes pictures in.
func imageParam(im llm.Image) (*anthropic.ImageBlockParam, error) {
	if err := im.Check(); err != nil {
		return nil, err
	}
	return &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{
		Data:      base64.StdEncoding.EncodeToString(im.Data),
		MediaType: anthropic.Base64ImageSourceMediaType(im.MediaType),
	}}}, nil
}

// markLastBlock puts a cache breakpoint on the last block of the
// conversation that can carry one (thinking blocks and system messages
// cannot), and reports whether it found one.
func markLastBlock(msgs []anthropic.MessageParam) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		var content []anthropic.ContentBlockParamUnion
		switch {
		case msgs[i].OfUser != nil:
			content = msgs[i].OfUser.Content
		case msgs[i].OfAssistant != nil:
			content = msgs[i].OfAssistant.Content
		}
		for j := len(content) - 1; j >= 0; j-- {
			c := &content[j]
			switch {
			case c.OfText != nil:
				c.OfText.CacheControl = anthropic.NewCacheControlEphemeralParam()
			case c.OfToolUse != nil:
				c.OfToolUse.CacheControl = anthropic.NewCacheControlEphemeralParam()
			case c.OfToolResult != nil:
				c.OfToolResult.CacheControl = anthropic.NewCacheControlEphemeralParam()
			default:
				continue
			}
			return true
		}
	}
	return false
}
