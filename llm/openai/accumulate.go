package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/troupe-dev/troupe/llm"
)

// accumulator turns the chunks of one completion stream into events and,
// at the end, the complete response. It does no I/O. Only choice 0 counts:
// requests never ask for more.
type accumulator struct {
	id, model string
	parts     []*part       // content blocks in order of appearance
	open      *part         // the text or thinking block deltas append to
	calls     map[int]*part // latest tool call per stream index
	finish    string
	refusal   bool
	usage     *openai.CompletionUsage
	chunks    int
}

// part is one content block being built.
type part struct {
	index   int
	typ     llm.BlockType
	text    strings.Builder // text, thinking, or tool arguments
	id      string
	name    string
	started bool // EventToolStart was yielded
	genID   bool // id was made up, the server sent none yet
	stopped bool // EventBlockStop was yielded
}

func newAccumulator() *accumulator { return &accumulator{calls: map[int]*part{}} }

// add incorporates one chunk and returns the events it makes.
func (a *accumulator) add(c openai.ChatCompletionChunk) []llm.Event {
	a.chunks++
	if a.id == "" {
		a.id = c.ID
	}
	if a.model == "" {
		a.model = c.Model
	}
	if c.JSON.Usage.Valid() {
		u := c.Usage
		a.usage = &u
	}
	var evs []llm.Event
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		d := ch.Delta
		if r := reasoning(d); r != "" {
			evs = a.appendText(evs, llm.BlockThinking, llm.EventThinking, r)
		}
		if d.Content != "" {
			evs = a.appendText(evs, llm.BlockText, llm.EventText, d.Content)
		}
		if d.Refusal != "" {
			a.refusal = true
			evs = a.appendText(evs, llm.BlockText, llm.EventText, d.Refusal)
		}
		for _, tc := range d.ToolCalls {
			evs = a.toolDelta(evs, tc)
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
	}
	return evs
}

// reasoning returns the reasoning delta that vLLM, DeepSeek, llama.cpp
// (reasoning_content) and Ollama (reasoning) send outside the OpenAI schema.
func reasoning(d openai.ChatCompletionChunkChoiceDelta) string {
	for _, k := range []string{"reasoning_content", "reasoning"} {
		f, ok := d.JSON.ExtraFields[k]
		if !ok || !strings.HasPrefix(f.Raw(), `"`) {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// appendText appends a text or thinking delta to the open block of that
// type, starting a new block when the open one is of another kind.
func (a *accumulator) appendText(evs []llm.Event, typ llm.BlockType, et llm.EventType, s string) []llm.Event {
	if a.open == nil || a.open.typ != typ {
		evs = a.stopOpen(evs)
		a.open = a.newPart(typ)
	}
	a.open.text.WriteString(s)
	return append(evs, llm.Event{Type: et, Index: a.open.index, Text: s})
}

func (a *accumulator) stopOpen(evs []llm.Event) []llm.Event {
	if a.open != nil && !a.open.stopped {
		a.open.stopped = true
		evs = append(evs, llm.Event{Type: llm.EventBlockStop, Index: a.open.index})
	}
	a.open = nil
	return evs
}

func (a *accumulator) newPart(typ llm.BlockType) *part {
	p := &part{index: len(a.parts), typ: typ}
	a.parts = append(a.parts, p)
	return p
}

// toolDelta applies one tool-call delta. Calls are keyed by their stream
// index; a delta bringing a new id at a known index starts another call,
// for servers that number every call 0.
func (a *accumulator) toolDelta(evs []llm.Event, tc openai.ChatCompletionChunkChoiceDeltaToolCall) []llm.Event {
	key := int(tc.Index)
	p := a.calls[key]
	if p != nil && tc.ID != "" && tc.ID != p.id {
		if p.genID {
			// The id came late; an EventToolStart already went out
			// with the made-up one.
			p.id, p.genID = tc.ID, false
		} else {
			p = nil // another call at the same index
		}
	}
	if p == nil {
		evs = a.stopOpen(evs)
		p = a.newPart(llm.BlockToolUse)
		a.calls[key] = p
		p.id = tc.ID
		if p.id == "" {
			p.id, p.genID = fmt.Sprintf("call_%d", p.index), true
		}
	}
	if p.name == "" {
		p.name = tc.Function.Name
	}
	args := tc.Function.Arguments
	p.text.WriteString(args)
	if !p.started && p.name != "" {
		p.started = true
		evs = append(evs, llm.Event{Type: llm.EventToolStart, Index: p.index,
			Block: &llm.Block{Type: llm.BlockToolUse, ToolUseID: p.id, Name: p.name}})
		args = p.text.String() // arguments that came before the name
	}
	if p.started && args != "" {
		evs = append(evs, llm.Event{Type: llm.EventToolInput, Index: p.index, Text: args})
	}
	return evs
}

// done validates the complete stream and returns the closing events (block
// stops) and the response. model is the requested model, for servers that
// report none.
func (a *accumulator) done(model string) ([]llm.Event, *llm.Response, error) {
	if a.finish == "" {
		if a.chunks == 0 {
			return nil, nil, fmt.Errorf("%w: the stream held no completion chunk", llm.ErrBadResponse)
		}
		return nil, nil, fmt.Errorf("%w: the stream ended without a finish reason", llm.ErrBadResponse)
	}
	msg := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{}}
	var evs []llm.Event
	tools := 0
	for _, p := range a.parts {
		b := llm.Block{Type: p.typ}
		switch p.typ {
		case llm.BlockText, llm.BlockThinking:
			b.Text = p.text.String()
		case llm.BlockToolUse:
			if p.name == "" {
				return nil, nil, fmt.Errorf("%w: tool call %s has no function name", llm.ErrBadResponse, p.id)
			}
			input, err := toolInput(p.text.String())
			if err != nil {
				return nil, nil, fmt.Errorf("%w: tool %s (call %s): %v", llm.ErrBadResponse, p.name, p.id, err)
			}
			b.ToolUseID, b.Name, b.Input = p.id, p.name, input
			tools++
		}
		msg.Content = append(msg.Content, b)
		if !p.stopped {
			p.stopped = true
			evs = append(evs, llm.Event{Type: llm.EventBlockStop, Index: p.index})
		}
	}
	if model == "" || a.model != "" {
		model = a.model
	}
	return evs, &llm.Response{
		ID:         a.id,
		Model:      model,
		Message:    msg,
		StopReason: stopReason(a.finish, tools > 0, a.refusal),
		Usage:      usage(a.usage),
	}, nil
}

// toolInput checks a tool call's arguments: empty means no arguments,
// anything else must be a JSON object.
func toolInput(args string) (json.RawMessage, error) {
	b := bytes.TrimSpace([]byte(args))
	if len(b) == 0 {
		return json.RawMessage(`{}`), nil
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("arguments are not valid JSON: %.200q", args)
	}
	if b[0] != '{' {
		return nil, fmt.Errorf("arguments are not a JSON object: %.200q", args)
	}
	return json.RawMessage(b), nil
}

// stopReason maps a finish reason. Some compatible servers finish tool
// calls with "stop"; a response holding tool calls stops for tool use
// whatever the server says, unless it ran out of tokens. Unknown reasons
// pass through.
func stopReason(finish string, tools, refusal bool) llm.StopReason {
	switch finish {
	case "length":
		return llm.StopMaxTokens
	case "content_filter":
		return llm.StopRefusal
	}
	if tools {
		return llm.StopToolUse
	}
	switch finish {
	case "stop":
		if refusal {
			return llm.StopRefusal
		}
		return llm.StopEndTurn
	case "tool_calls", "function_call":
		return llm.StopToolUse
	}
	return llm.StopReason(finish)
}

// usage maps the API's usage: prompt_tokens counts cached tokens and cache
// writes, which llm.Usage keeps apart. A server that sent no usage costs
// zero.
func usage(u *openai.CompletionUsage) llm.Usage {
	if u == nil {
		return llm.Usage{}
	}
	read := u.PromptTokensDetails.CachedTokens
	write := u.PromptTokensDetails.CacheWriteTokens
	return llm.Usage{
		InputTokens:      max(u.PromptTokens-read-write, 0),
		OutputTokens:     u.CompletionTokens,
		CacheReadTokens:  read,
		CacheWriteTokens: write,
	}
}
