package session

import (
	"fmt"
	"strings"
)

// Clear starts a fresh conversation, as /clear asks: the idle lead is
// replaced by one its factory (StartLead) builds with no history, and a
// KindCleared event says so. Input that waited for the old lead (a
// teammate's message) goes to the new one. The session, its background
// work and its team stay. The lead must be idle.
func (s *Session) Clear() error {
	if err := s.swapLead("clear", false); err != nil {
		return err
	}
	s.publish(Event{Kind: KindCleared})
	return nil
}

// Model returns the model name set by SetModel; "" means the one the
// lead was started with.
func (s *Session) Model() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}

// SetModel switches the lead to the model name from its next turn on, as
// /model NAME asks: the idle lead is rebuilt by its factory (StartLead),
// which reads Model, on the same conversation; a KindModel event says so.
// The name is one word; the lead must be idle.
func (s *Session) SetModel(name string) error {
	if name == "" || len(strings.Fields(name)) != 1 || strings.TrimSpace(name) != name {
		return fmt.Errorf("session: model %q is not a model name (one word)", name)
	}
	s.mu.Lock()
	prev := s.model
	s.model = name
	s.mu.Unlock()
	if err := s.swapLead("switch the model", true); err != nil {
		s.mu.Lock()
		s.model = prev
		s.mu.Unlock()
		return err
	}
	s.publish(Event{Kind: KindModel, Text: name})
	return nil
}

// swapLead replaces the idle foreground lead by a new one from the
// factory, on the old one's conversation when keep is set (else none),
// with the old one's waiting input. No run starts meanwhile; one starts
// after for input that came (Serve).
func (s *Session) swapLead(what string, keep bool) error {
	s.mu.Lock()
	old, f := s.seat, s.factory
	switch {
	case f == nil || old == nil:
		s.mu.Unlock()
		return fmt.Errorf("session: cannot %s: no lead started with StartLead", what)
	case s.closed:
		s.mu.Unlock()
		return ErrClosed
	case s.running:
		s.mu.Unlock()
		return fmt.Errorf("the lead is working; %s when it is idle (Esc interrupts it): %w", what, ErrBusy)
	}
	s.running = true // no run starts while the lead changes hands
	s.mu.Unlock()
	fresh := &seat{s: s}
	var err error
	if keep {
		fresh.ag, err = f(old.ag.Messages(), fresh.observe)
	} else {
		fresh.ag, err = f(nil, fresh.observe)
	}
	s.mu.Lock()
	if err == nil {
		// Under s.mu, the lock Submit sends to a working lead under:
		// nothing sent to the old lead is lost.
		for _, text := range old.ag.TakePending() {
			fresh.ag.Send(text)
		}
		s.seat, s.lead = fresh, fresh.ag
	}
	s.running = false
	s.mu.Unlock()
	s.signal() // what came meanwhile starts a run (Serve)
	if err != nil {
		return fmt.Errorf("session: a new lead: %w", err)
	}
	old.ag.Kill()
	return nil
}
