package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/troupe-dev/troupe/llm"
)

// attemptResult is how one attempt ended. A nil err means the stream was
// delivered (EventDone yielded) or the caller stopped it.
type attemptResult struct {
	err     error
	yielded bool // some event of this attempt reached the caller
	// retryable says the call may succeed if repeated, from the start.
	retryable bool
	// retryAfter is the server's retry-after, when hasRetryAfter.
	retryAfter    time.Duration
	hasRetryAfter bool
}

// attempt makes one streaming call and yields its events.
func (m *Model) attempt(ctx context.Context, params anthropic.MessageNewParams, opts []option.RequestOption, yield func(llm.Event, error) bool) attemptResult {
	stream := m.client.Messages.NewStreaming(ctx, params, opts...)
	defer stream.Close()
	s := &streamState{yield: yield, inputs: map[int]json.RawMessage{}, deltas: map[int]*bytes.Buffer{}}
	for stream.Next() {
		s.events++
		if err := s.handle(stream.Current()); err != nil {
			m.log.WarnContext(ctx, "anthropic: malformed response", "err", err)
			return attemptResult{err: err, yielded: s.yielded}
		}
		if s.stopped || s.done {
			return attemptResult{}
		}
	}
	if err := stream.Err(); err != nil {
		return classify(err, s)
	}
	return attemptResult{err: badResponse("stream ended before message_stop"), yielded: s.yielded}
}

// streamState turns the SDK's stream events into llm events and
// accumulates the message.
type streamState struct {
	yield   func(llm.Event, error) bool
	acc     anthropic.Message
	events  int  // stream events received
	started bool // message_start seen
	yielded bool
	stopped bool // the caller stopped the sequence
	done    bool // EventDone yielded

	deltas map[int]*bytes.Buffer   // partial JSON of tool_use blocks, by index
	inputs map[int]json.RawMessage // validated input of stopped tool_use blocks
}

// emit yields ev, recording that the caller saw something.
func (s *streamState) emit(ev llm.Event) {
	s.yielded = true
	if !s.yield(ev, nil) {
		s.stopped = true
	}
}

// handle processes one event; its error wraps llm.ErrBadResponse.
func (s *streamState) handle(ev anthropic.MessageStreamEventUnion) error {
	if err := s.acc.Accumulate(ev); err != nil {
		return badResponse("%v", err)
	}
	i := int(ev.Index)
	switch ev.Type {
	case "message_start":
		s.started = true
	case "content_block_start":
		cb := ev.ContentBlock
		switch cb.Type {
		case "tool_use":
			s.emit(llm.Event{Type: llm.EventToolStart, Index: i, Block: &llm.Block{Type: llm.BlockToolUse, ToolUseID: cb.ID, Name: cb.Name}})
		case "text":
			if cb.Text != "" {
				s.emit(llm.Event{Type: llm.EventText, Index: i, Text: cb.Text})
			}
		case "thinking":
			if cb.Thinking != "" {
				s.emit(llm.Event{Type: llm.EventThinking, Index: i, Text: cb.Thinking})
			}
		}
	case "content_block_delta":
		d := ev.Delta
		switch d.Type {
		case "text_delta":
			s.emit(llm.Event{Type: llm.EventText, Index: i, Text: d.Text})
		case "thinking_delta":
			s.emit(llm.Event{Type: llm.EventThinking, Index: i, Text: d.Thinking})
		case "input_json_delta":
			buf := s.deltas[i]
			if buf == nil {
				buf = new(bytes.Buffer)
				s.deltas[i] = buf
			}
			buf.WriteString(d.PartialJSON)
			if d.PartialJSON != "" && s.acc.Content[i].Type == "tool_use" { // a server tool's input is not the caller's to run
				s.emit(llm.Event{Type: llm.EventToolInput, Index: i, Text: d.PartialJSON})
			}
		}
	case "content_block_stop":
		b, ok, err := s.block(i)
		if err != nil {
			return err
		}
		if ok {
			s.emit(llm.Event{Type: llm.EventBlockStop, Index: i, Block: &b})
		}
	case "message_stop":
		if !s.started {
			return badResponse("message_stop without message_start")
		}
		resp, err := s.response()
		if err != nil {
			return err
		}
		s.emit(llm.Event{Type: llm.EventDone, Response: resp})
		s.done = true
	}
	return nil
}

// block converts accumulated content block i; ok is false for a block
// type the llm vocabulary does not have.
func (s *streamState) block(i int) (b llm.Block, ok bool, err error) {
	cb := s.acc.Content[i]
	switch cb.Type {
	case "text":
		return llm.Text(cb.Text), true, nil
	case "thinking":
		return llm.Block{Type: llm.BlockThinking, Text: cb.Thinking, Signature: cb.Signature}, true, nil
	case "redacted_thinking":
		return llm.Block{Type: llm.BlockRedactedThinking, Data: cb.Data}, true, nil
	case "tool_use":
		input, err := s.toolInput(i)
		if err != nil {
			return b, false, err
		}
		return llm.ToolUse(cb.ID, cb.Name, input), true, nil
	case "server_tool_use":
		input, err := s.toolInput(i)
		if err != nil {
			return b, false, err
		}
		return llm.Block{Type: llm.BlockServerToolUse, ToolUseID: cb.ID, Name: cb.Name, Input: input}, true, nil
	case "web_search_tool_result":
		b, err := searchResult(cb.ToolUseID, cb.Content.RawJSON())
		return b, err == nil, err
	}
	return b, false, nil
}

// searchResult converts a web_search_tool_result's content: an array of
// web_search_result blocks, or an error object with its error_code.
func searchResult(toolUseID, raw string) (llm.Block, error) {
	b := llm.Block{Type: llm.BlockWebSearchResult, ToolUseID: toolUseID}
	raw = strings.TrimSpace(raw)
	if strings.HasPrefix(raw, "[") {
		var hits []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			PageAge string `json:"page_age"`
		}
		if err := json.Unmarshal([]byte(raw), &hits); err != nil {
			return b, badResponse("web_search_tool_result %s: %v", toolUseID, err)
		}
		for _, h := range hits {
			b.Results = append(b.Results, llm.SearchResult{Title: h.Title, URL: h.URL, PageAge: h.PageAge})
		}
		return b, nil
	}
	var e struct {
		ErrorCode string `json:"error_code"`
	}
	if err := json.Unmarshal([]byte(raw), &e); err != nil || e.ErrorCode == "" {
		return b, badResponse("web_search_tool_result %s: content is neither results nor an error: %.200q", toolUseID, raw)
	}
	b.IsError, b.Text = true, e.ErrorCode
	return b, nil
}

// toolInput returns the input of tool_use block i: its streamed partial
// JSON, or the input of its start event when nothing was streamed.
func (s *streamState) toolInput(i int) (json.RawMessage, error) {
	if in, ok := s.inputs[i]; ok {
		return in, nil
	}
	var in []byte
	if buf := s.deltas[i]; buf != nil {
		in = bytes.TrimSpace(buf.Bytes())
	} else {
		in = bytes.TrimSpace(s.acc.Content[i].Input)
	}
	if len(in) == 0 {
		in = []byte(`{}`)
	}
	if !json.Valid(in) {
		cb := s.acc.Content[i]
		return nil, badResponse("tool_use %s (%s): input is not valid JSON: %.200q", cb.ID, cb.Name, in)
	}
	in = bytes.Clone(in)
	s.inputs[i] = in
	return in, nil
}

// response builds the final response from the accumulated message.
func (s *streamState) response() (*llm.Response, error) {
	a := &s.acc
	blocks := make([]llm.Block, 0, len(a.Content))
	for i := range a.Content {
		b, ok, err := s.block(i)
		if err != nil {
			return nil, err
		}
		if ok {
			blocks = append(blocks, b)
		}
	}
	return &llm.Response{
		ID:         a.ID,
		Model:      string(a.Model),
		Message:    llm.Message{Role: llm.RoleAssistant, Content: blocks},
		StopReason: llm.StopReason(a.StopReason),
		Usage: llm.Usage{
			InputTokens:      a.Usage.InputTokens,
			OutputTokens:     a.Usage.OutputTokens,
			CacheReadTokens:  a.Usage.CacheReadInputTokens,
			CacheWriteTokens: a.Usage.CacheCreationInputTokens,
		},
	}, nil
}

// badResponse returns an error wrapping llm.ErrBadResponse.
func badResponse(format string, args ...any) error {
	return fmt.Errorf("anthropic: %w: %s", llm.ErrBadResponse, fmt.Sprintf(format, args...))
}
