// Package kick is the coalescing signal channel behind the stores' Watch
// methods: many kicks may become one receive, a kick never blocks, and
// closing is safe against concurrent kicks.
package kick

import "sync"

// Signal is one watch channel. It is safe for concurrent use.
type Signal struct {
	mu      sync.Mutex // orders kicks against Close: nothing is sent on a closed channel
	closed  bool
	onClose func() bool
	ch      chan struct{}
}

// New returns an open Signal.
func New() *Signal { return &Signal{ch: make(chan struct{}, 1)} }

// C is the channel the watcher receives from; it is closed by Close.
func (s *Signal) C() <-chan struct{} { return s.ch }

// Kick sends a coalesced signal without blocking; after Close it does
// nothing.
func (s *Signal) Kick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	select {
	case s.ch <- struct{}{}:
	default:
	}
}

// OnClose sets a function Close calls (such as the stop of a
// context.AfterFunc registration).
func (s *Signal) OnClose(f func() bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onClose = f
}

// Close closes the channel; later calls only call the OnClose function
// again, which must tolerate that.
func (s *Signal) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.ch)
	}
	if s.onClose != nil {
		s.onClose()
	}
}
