package claudecodetest

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/troupe-dev/troupe/llm/llmtest"
)

// Turns records what a claude's model was shown, the last user message
// of each request as text, so a test can wait for the turn a message
// caused and print them all on failure. It is safe for concurrent use.
type Turns struct {
	mu    sync.Mutex
	turns []string
	kick  chan struct{}
}

// NewTurns returns an empty record.
func NewTurns() *Turns { return &Turns{kick: make(chan struct{}, 1)} }

// LastUser returns the last user message of req and the text of its
// blocks, one a line.
func LastUser(req *llmtest.AnthropicRequest) (llmtest.AnthropicMessage, string) {
	var last llmtest.AnthropicMessage
	for _, m := range req.Messages {
		if m.Role == "user" {
			last = m
		}
	}
	var b strings.Builder
	for _, c := range last.Content {
		b.WriteString(c.Text)
		b.WriteString("\n")
	}
	return last, b.String()
}

// Record adds one turn's text and wakes Wait.
func (l *Turns) Record(text string) {
	l.mu.Lock()
	l.turns = append(l.turns, text)
	l.mu.Unlock()
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// Handler returns a handler that records the last user message of each
// request and answers with the text reply.
func (l *Turns) Handler(reply string) llmtest.AnthropicHandler {
	return func(req *llmtest.AnthropicRequest) llmtest.AnthropicReply {
		_, text := LastUser(req)
		l.Record(text)
		return llmtest.AnthropicText(reply)
	}
}

// Wait returns the first recorded turn containing s, waiting for it
// until ctx ends.
func (l *Turns) Wait(ctx context.Context, s string) (string, error) {
	for {
		l.mu.Lock()
		for _, t := range l.turns {
			if strings.Contains(t, s) {
				l.mu.Unlock()
				return t, nil
			}
		}
		n := len(l.turns)
		l.mu.Unlock()
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no model turn containing %q in %d turns: %w", s, n, ctx.Err())
		case <-l.kick:
		}
	}
}

// All returns a copy of the recorded turns.
func (l *Turns) All() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.turns...)
}

// String returns the recorded turns separated by "----" lines.
func (l *Turns) String() string { return strings.Join(l.All(), "\n----\n") }
