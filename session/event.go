package session

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
)

// Kind says what an Event reports.
type Kind string

// The kinds of Event.
const (
	// From the lead's agent (Agent holds the agent event).
	KindText       Kind = "text"        // the lead's assistant message (with its usage)
	KindToolStart  Kind = "tool_start"  // the lead calls a tool
	KindToolResult Kind = "tool_result" // a tool's result reached the lead
	KindRetry      Kind = "retry"       // the model call is retried
	KindCompact    Kind = "compact"     // the conversation was compacted
	KindAgent      Kind = "agent"       // any other agent event

	// From the task registry (Task holds the task event).
	KindTaskStarted  Kind = "task_started"
	KindTaskProgress Kind = "task_progress" // output or progress; may be coalesced
	KindTaskEnded    Kind = "task_ended"    // terminal: completed, failed or killed
	KindTaskStalled  Kind = "task_stalled"

	// From the team (Team holds the swarm event).
	KindTeam Kind = "team"

	// The session's own.
	KindTurnStarted Kind = "turn_started" // the lead starts a run (Text: its prompt)
	KindTurnEnded   Kind = "turn_ended"   // a run ended (Result, Err)
	KindError       Kind = "error"        // something failed outside a turn (Err)
	KindMode        Kind = "mode"         // the lead's permission mode changed (Text: the mode)
)

// Event is one thing that happened in a session. Time and Kind are always
// set; the other fields as the kind says.
type Event struct {
	Time   time.Time
	Kind   Kind
	Agent  *agent.Event  // the lead's agent event
	Task   *task.Event   // a task event
	Team   *swarm.Event  // a team event
	Text   string        // KindTurnStarted: the prompt
	Result *agent.Result // KindTurnEnded
	Err    error         // KindTurnEnded, KindError; KindPermissionAnswer when withdrawn

	Question *Question // KindPermission, KindPermissionAnswer
	Verdict  *Verdict  // KindPermissionAnswer
	Queued   int       // KindPermission, KindPermissionAnswer: questions waiting now
}

// coalescable reports events a subscriber may replace by a later one of
// the same task: progress, never a start, an end, a message or a
// permission question.
func (e Event) coalescable() bool {
	return e.Kind == KindTaskProgress && e.Task != nil
}

// ErrClosed is returned by Next after the subscription or the session is
// closed and the queue is empty.
var ErrClosed = errors.New("session: closed")

// Subscription receives a session's events in order. Its queue is
// unbounded, so a slow subscriber never blocks the session; with Coalesce
// set, a task's queued progress event is replaced by its next one, and
// nothing else is ever dropped.
type Subscription struct {
	coalesce bool
	kick     chan struct{} // 1 slot

	mu     sync.Mutex
	queue  []Event
	closed bool
	done   func(*Subscription)
}

func (s *Subscription) push(e Event) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if s.coalesce && e.coalescable() && len(s.queue) > 0 {
		if last := s.queue[len(s.queue)-1]; last.coalescable() && last.Task.State.ID == e.Task.State.ID {
			s.queue[len(s.queue)-1] = e
			s.mu.Unlock()
			return
		}
	}
	s.queue = append(s.queue, e)
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// TryNext returns the next queued event without waiting.
func (s *Subscription) TryNext() (Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return Event{}, false
	}
	e := s.queue[0]
	s.queue[0] = Event{}
	s.queue = s.queue[1:]
	return e, true
}

// Next waits for the next event. It returns ErrClosed once the
// subscription is closed and drained, or ctx's error.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	for {
		if e, ok := s.TryNext(); ok {
			return e, nil
		}
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return Event{}, ErrClosed
		}
		select {
		case <-s.kick:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// Close ends the subscription: no more events are queued; those queued
// can still be read.
func (s *Subscription) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	done := s.done
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
	if done != nil {
		done(s)
	}
}

// bus fans events out to subscriptions.
type bus struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

func (b *bus) subscribe(coalesce bool) *Subscription {
	s := &Subscription{coalesce: coalesce, kick: make(chan struct{}, 1)}
	s.done = func(s *Subscription) {
		b.mu.Lock()
		delete(b.subs, s)
		b.mu.Unlock()
	}
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[*Subscription]struct{}{}
	}
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return s
}

// publish queues e for every subscriber, in one order for all: the lock
// is held while queueing (queueing never blocks).
func (b *bus) publish(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		s.push(e)
	}
}

func (b *bus) close() {
	b.mu.Lock()
	subs := make([]*Subscription, 0, len(b.subs))
	for s := range b.subs {
		subs = append(subs, s)
	}
	b.mu.Unlock()
	for _, s := range subs {
		s.Close()
	}
}
