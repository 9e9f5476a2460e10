// Package scripted is a model provider that replays a script of assistant
// turns instead of calling a model. Tests and the offline demo use it; it
// drives the same agent loop as a real model does, tool calls included.
//
// A script is a JSON document (format in docs/scripted.md):
//
//	{
//	  "turns": [
//	    {"match": {"system": "researcher", "user": "find the bug"},
//	     "reply": {"text": "Looking.", "tool_calls": [{"name": "Grep", "input": {"pattern": "nil"}}]}},
//	    {"match": {"tool_result": "Grep"}, "reply": {"text": "Found it."}}
//	  ]
//	}
//
// Each request is answered by the first turn, in script order, whose match
// holds and which is not used up. A turn is used once unless it sets
// "repeat": true. A request that no turn matches fails with an error that
// shows the request's last message, so a script is easy to debug.
//
// A Model is safe for concurrent use; many agents may share one script.
package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/llm"
)

// Script is a parsed script.
type Script struct {
	Model string `json:"model,omitempty"`
	Turns []Turn `json:"turns"`
}

// Turn is one scripted answer and the requests it answers.
type Turn struct {
	Match  Match `json:"match"`
	Reply  Reply `json:"reply"`
	Repeat bool  `json:"repeat,omitempty"`
}

// Match selects requests. Every non-empty field must hold; an empty Match
// matches every request.
type Match struct {
	// System: the system prompt contains this text.
	System string `json:"system,omitempty"`
	// User: the last user message's text (tool results included) contains
	// this text.
	User string `json:"user,omitempty"`
	// ToolResult: the last user message carries a result of this tool.
	ToolResult string `json:"tool_result,omitempty"`
	// Turn: the request has exactly this many assistant messages before it
	// (0 for the first call of a conversation).
	Turn *int `json:"turn,omitempty"`
}

// Reply is a scripted assistant message.
type Reply struct {
	Thinking   string         `json:"thinking,omitempty"`
	Text       string         `json:"text,omitempty"`
	ToolCalls  []ToolCall     `json:"tool_calls,omitempty"`
	StopReason llm.StopReason `json:"stop_reason,omitempty"` // default end_turn, or tool_use with calls
	Usage      *llm.Usage     `json:"usage,omitempty"`
	DelayMS    int            `json:"delay_ms,omitempty"` // wait before answering
	Error      string         `json:"error,omitempty"`    // fail the call with this message
}

// ToolCall is one scripted tool use.
type ToolCall struct {
	ID    string          `json:"id,omitempty"` // generated when empty
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input,omitempty"`
}

// Parse decodes and checks a script; errors name the turn and field.
func Parse(data []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line, col := position(data, se.Offset)
			return nil, fmt.Errorf("script: line %d, column %d: %v", line, col, err)
		case errors.As(err, &te):
			line, col := position(data, te.Offset)
			return nil, fmt.Errorf("script: line %d, column %d: field %s must be %s", line, col, te.Field, te.Type)
		}
		return nil, fmt.Errorf("script: %w", err)
	}
	if len(s.Turns) == 0 {
		return nil, errors.New("script: no turns")
	}
	for i, t := range s.Turns {
		for j, c := range t.Reply.ToolCalls {
			if c.Name == "" {
				return nil, fmt.Errorf("script: turns[%d].reply.tool_calls[%d]: name is empty", i, j)
			}
			if len(c.Input) > 0 && !json.Valid(c.Input) {
				return nil, fmt.Errorf("script: turns[%d].reply.tool_calls[%d]: input is not valid JSON", i, j)
			}
			if err := checkCaptures(string(c.Input)); err != nil {
				return nil, fmt.Errorf("script: turns[%d].reply.tool_calls[%d].input: %v", i, j, err)
			}
		}
		if t.Reply.Text == "" && len(t.Reply.ToolCalls) == 0 && t.Reply.Error == "" && t.Reply.Thinking == "" {
			return nil, fmt.Errorf("script: turns[%d].reply: needs text, tool_calls or error", i)
		}
	}
	return &s, nil
}

// Load reads and parses a script file.
func Load(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func position(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line = 1 + bytes.Count(data[:off], []byte("\n"))
	col = int(off) - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

// Model replays a Script.
type Model struct {
	script *Script

	mu    sync.Mutex
	used  []bool // guarded by mu
	calls int    // guarded by mu; also numbers generated tool ids
}

var _ llm.Model = (*Model)(nil)

// New returns a model replaying s.
func New(s *Script) *Model { return &Model{script: s, used: make([]bool, len(s.Turns))} }

// Info implements llm.Model.
func (m *Model) Info() llm.Info {
	name := m.script.Model
	if name == "" {
		name = "scripted"
	}
	return llm.Info{Provider: "scripted", Model: name, ContextWindow: 200000}
}

// Calls returns how many requests the model has answered.
func (m *Model) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

// Unused returns the indexes of non-repeating turns never used.
func (m *Model) Unused() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int
	for i, u := range m.used {
		if !u && !m.script.Turns[i].Repeat {
			out = append(out, i)
		}
	}
	return out
}

// pick returns the turn that answers req.
func (m *Model) pick(req llm.Request) (Turn, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, t := range m.script.Turns {
		if (m.used[i] && !t.Repeat) || !t.Match.matches(req) {
			continue
		}
		m.used[i] = true
		m.calls++
		return t, m.calls, nil
	}
	last := ""
	if n := len(req.Messages); n > 0 {
		last = describe(req.Messages[n-1])
	}
	return Turn{}, 0, fmt.Errorf("scripted: no unused turn matches this request (%d messages; last: %s)", len(req.Messages), last)
}

func (mt Match) matches(req llm.Request) bool {
	if mt.System != "" && !strings.Contains(req.System, mt.System) {
		return false
	}
	var last llm.Message
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			last = req.Messages[i]
			break
		}
	}
	if mt.User != "" && !strings.Contains(userText(last), mt.User) {
		return false
	}
	if mt.ToolResult != "" && !hasResultOf(req.Messages, mt.ToolResult) {
		return false
	}
	if mt.Turn != nil {
		n := 0
		for _, msg := range req.Messages {
			if msg.Role == llm.RoleAssistant {
				n++
			}
		}
		if n != *mt.Turn {
			return false
		}
	}
	return true
}

func userText(m llm.Message) string {
	var b strings.Builder
	for _, blk := range m.Content {
		if blk.Type == llm.BlockText || blk.Type == llm.BlockToolResult {
			b.WriteString(blk.Text)
			b.WriteByte('\n')
		}
		for _, im := range blk.Images {
			b.WriteString(im.String()) // so that a match can see a picture arrived
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// hasResultOf reports whether the last message answers a call of tool.
func hasResultOf(msgs []llm.Message, tool string) bool {
	if len(msgs) < 2 {
		return false
	}
	ids := map[string]string{}
	for _, b := range msgs[len(msgs)-2].Content {
		if b.Type == llm.BlockToolUse {
			ids[b.ToolUseID] = b.Name
		}
	}
	for _, b := range msgs[len(msgs)-1].Content {
		if b.Type == llm.BlockToolResult && ids[b.ToolUseID] == tool {
			return true
		}
	}
	return false
}

func describe(m llm.Message) string {
	s := strings.TrimSpace(userText(m))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return fmt.Sprintf("%s %q", m.Role, s)
}

// Stream implements llm.Model: it answers with the matching turn, streamed
// as text deltas, tool starts and inputs, then EventDone.
func (m *Model) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		t, n, err := m.pick(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		r := t.Reply
		if r.DelayMS > 0 {
			timer := time.NewTimer(time.Duration(r.DelayMS) * time.Millisecond)
			select {
			case <-ctx.Done():
				timer.Stop()
				yield(llm.Event{}, fmt.Errorf("scripted: %w", context.Cause(ctx)))
				return
			case <-timer.C:
			}
		}
		if err := ctx.Err(); err != nil {
			yield(llm.Event{}, fmt.Errorf("scripted: %w", context.Cause(ctx)))
			return
		}
		if r.Error != "" {
			yield(llm.Event{}, &llm.APIError{Provider: "scripted", Type: "scripted_error", Message: r.Error})
			return
		}
		msg := llm.Message{Role: llm.RoleAssistant}
		idx := 0
		if r.Thinking != "" {
			if !yield(llm.Event{Type: llm.EventThinking, Index: idx, Text: r.Thinking}, nil) {
				return
			}
			msg.Content = append(msg.Content, llm.Block{Type: llm.BlockThinking, Text: r.Thinking, Signature: "scripted"})
			idx++
		}
		if r.Text != "" {
			for _, chunk := range chunks(r.Text) {
				if !yield(llm.Event{Type: llm.EventText, Index: idx, Text: chunk}, nil) {
					return
				}
			}
			if !yield(llm.Event{Type: llm.EventBlockStop, Index: idx}, nil) {
				return
			}
			msg.Content = append(msg.Content, llm.Text(r.Text))
			idx++
		}
		for j, c := range r.ToolCalls {
			id := c.ID
			if id == "" {
				id = fmt.Sprintf("toolu_scripted_%d_%d", n, j)
			}
			input := c.Input
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			input, err = expandInput(input, req.Messages)
			if err != nil {
				yield(llm.Event{}, err)
				return
			}
			b := llm.ToolUse(id, c.Name, append(json.RawMessage(nil), input...))
			if !yield(llm.Event{Type: llm.EventToolStart, Index: idx, Block: &llm.Block{Type: llm.BlockToolUse, ToolUseID: id, Name: c.Name}}, nil) ||
				!yield(llm.Event{Type: llm.EventToolInput, Index: idx, Text: string(input)}, nil) ||
				!yield(llm.Event{Type: llm.EventBlockStop, Index: idx}, nil) {
				return
			}
			msg.Content = append(msg.Content, b)
			idx++
		}
		stop := r.StopReason
		if stop == "" {
			stop = llm.StopEndTurn
			if len(r.ToolCalls) > 0 {
				stop = llm.StopToolUse
			}
		}
		usage := llm.Usage{InputTokens: int64(approxTokens(req)), OutputTokens: int64(len(r.Text)/4 + 10*len(r.ToolCalls) + 1)}
		if r.Usage != nil {
			usage = *r.Usage
		}
		yield(llm.Event{Type: llm.EventDone, Response: &llm.Response{
			ID: fmt.Sprintf("msg_scripted_%d", n), Model: m.Info().Model, Message: msg, StopReason: stop, Usage: usage,
		}}, nil)
	}
}

// chunks splits s into a few deltas, as a real stream would.
func chunks(s string) []string {
	const size = 16
	var out []string
	for len(s) > size {
		cut := size
		for cut < len(s) && s[cut]&0xC0 == 0x80 { // keep UTF-8 sequences whole
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}

// imageBytes is what a picture counts for in approxTokens: about 1,600
// tokens, the cost of a typical screenshot.
const imageBytes = 1600 * 4

// approxTokens estimates a request's input tokens (4 bytes a token, a
// picture as imageBytes).
func approxTokens(req llm.Request) int {
	n := len(req.System)
	for _, m := range req.Messages {
		for _, b := range m.Content {
			n += len(b.Text) + len(b.Input) + imageBytes*len(b.Images)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Description) + len(t.InputSchema)
	}
	return n/4 + 1
}
