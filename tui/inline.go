package tui

import (
	"context"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
)

// Without the alternate screen (Options.NoAltScreen, troupe
// --no-alt-screen) the conversation goes to the terminal's own
// scrollback, where the terminal searches and selects it: each entry is
// printed above the program once it is settled (an answer complete, a
// tool call done), in order, and the frame shows only what still changes
// (the entries after the first unsettled one) above the prompt.

// printer prints lines above the program in the order they are put,
// from a goroutine of its own: Update never waits for the program.
type printer struct {
	mu   sync.Mutex
	out  []string
	wake chan struct{}
}

func newPrinter() *printer { return &printer{wake: make(chan struct{}, 1)} }

// put queues text to print.
func (p *printer) put(text string) {
	p.mu.Lock()
	p.out = append(p.out, text)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// take returns what is queued and empties the queue.
func (p *printer) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.out
	p.out = nil
	return out
}

// run hands what is put to prog (tea.Program.Send of a tea.Println),
// in order, until ctx ends.
func (p *printer) run(ctx context.Context, send func(tea.Msg)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		}
		for _, text := range p.take() {
			send(tea.Println(text)())
		}
	}
}

// settled reports whether entry e will not change any more.
func settled(e *entry) bool {
	switch e.kind {
	case entryAssistant:
		return !e.streaming
	case entryTool:
		return e.done
	}
	return true
}

// flush prints the lead's settled entries that are not printed yet, up
// to the first unsettled one.
func (m *model) flush() {
	c := &m.convo
	for c.printed < len(c.entries) && settled(&c.entries[c.printed]) {
		m.printer.put(strings.Join(c.render(m.st, c.printed, m.now), "\n"))
		c.printed++
	}
}

// live renders the entries not printed yet, at most h lines (their end).
func (m *model) live(h int) []string {
	c := &m.convo
	var out []string
	for i := c.printed; i < len(c.entries); i++ {
		out = append(out, c.render(m.st, i, m.now)...)
	}
	if len(out) > h {
		out = out[len(out)-h:]
	}
	return out
}
