package task

import (
	"context"
	"github.com/troupe-dev/troupe/internal/fifo"
)

// EventKind says what happened to a task.
type EventKind string

// Event kinds. Started and Terminated are the stream-json system events
// (subtypes task_started and task_terminated).
const (
	EventStarted    EventKind = "task_started"
	EventTerminated EventKind = "task_terminated"
	EventUpdated    EventKind = "task_updated" // any other change
	EventOutput     EventKind = "task_output"  // Poll found new output
	EventStalled    EventKind = "task_stalled" // a shell seems to wait for input
	EventMonitor    EventKind = "task_monitor" // a monitor's batch of lines for its agent
	EventEvicted    EventKind = "task_evicted" // removed from the registry
	EventRegistered EventKind = "task_registered"
)

// Event is one change of one task.
type Event struct {
	Kind  EventKind
	State State // the task after the change
	// Summary is set on EventTerminated, EventStalled and EventMonitor.
	Summary string
	// Notification is the <task-notification> text for the model, on
	// EventTerminated (empty when the task was stopped on purpose: the
	// stopper already knows), EventStalled and EventMonitor.
	Notification string
	// Output is the new output on EventOutput, read from Offset.
	Output []byte
	Offset int64
}

// Subscription receives the registry's events in order. Its queue is
// unbounded, so a slow reader never blocks the registry.
type Subscription struct {
	r *Registry
	q *fifo.Queue[Event]
}

// push queues e; it never blocks.
func (s *Subscription) push(e Event) { s.q.Push(e) }

// TryNext returns the next event, if one is queued.
func (s *Subscription) TryNext() (Event, bool) { return s.q.TryNext() }

// Next waits for the next event. It fails with ctx's cause, or ErrClosed
// once the subscription or registry is closed and the queue is empty.
func (s *Subscription) Next(ctx context.Context) (Event, error) { return s.q.Next(ctx, ErrClosed) }

// Wait waits until an event is queued, without taking it (TryNext does).
// It fails like Next.
func (s *Subscription) Wait(ctx context.Context) error { return s.q.Wait(ctx, ErrClosed) }

// Close ends the subscription; queued events can still be read.
func (s *Subscription) Close() {
	s.r.unsubscribe(s)
	s.closeQueue()
}

func (s *Subscription) closeQueue() { s.q.Close() }
