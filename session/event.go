package session

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/internal/fifo"
	"github.com/troupe-dev/troupe/peer"
	"github.com/troupe-dev/troupe/schedule"
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
	KindTaskMonitor  Kind = "task_monitor" // a monitor's batch of lines, told to its agent

	// From the team (Team holds the swarm event): a line of the team's
	// timeline, of one of these kinds.
	KindTeam           Kind = "team"            // anything else (a backend chosen, a claim, a warning)
	KindTeamCreated    Kind = "team_created"    // the lead created its team
	KindTeamDeleted    Kind = "team_deleted"    // deleted (TeamDelete) or removed with the session
	KindTeammateJoined Kind = "teammate_joined" // a teammate started (or fell back to in-process)
	KindTeammateState  Kind = "teammate_state"  // idle, shutting down, shut down, stopped, dead
	KindMessage        Kind = "message"         // a teammate's message reached the lead (or a person's went out)
	KindTeamPermission Kind = "team_permission" // a teammate's permission request or its answer, a plan step

	// The session's own.
	KindTurnStarted Kind = "turn_started" // the lead starts a run (Text: its prompt)
	KindTurnEnded   Kind = "turn_ended"   // a run ended (Result, Err)
	KindMode        Kind = "mode"         // the lead's permission mode changed (Text: the mode)
	KindRules       Kind = "rules"        // a person changed the lead's rules (Text says how)
	KindNotice      Kind = "notice"       // something a person should know (Text)
	// The running turn moved into a task (TaskID; Text: its prompt), and a
	// fresh lead took the foreground; what the backgrounded agent does
	// comes as agent events with TaskID set.
	KindBackgrounded Kind = "backgrounded"
	KindForegrounded Kind = "foregrounded" // the lead held by TaskID is the foreground's again
	KindCleared      Kind = "cleared"      // a fresh conversation began (Session.Clear)
	KindModel        Kind = "model"        // the lead's model changed for its next turn (Text: its name)
	// The schedule's (schedule.go): a firing reached the lead as input
	// (Firing; Text: the line a person reads), and the schedule changed
	// (Schedule: its whole state).
	KindScheduled Kind = "scheduled"
	KindSchedule  Kind = "schedule"
)

// Event is one thing that happened in a session. Time and Kind are always
// set; the other fields as the kind says.
type Event struct {
	Time   time.Time
	Kind   Kind
	Agent  *agent.Event  // the lead's agent event (TaskID set: a backgrounded turn's)
	TaskID string        // KindBackgrounded, KindForegrounded; an agent event of a backgrounded turn
	Task   *task.Event   // a task event
	Team   *swarm.Event  // a team event
	Text   string        // KindTurnStarted: the prompt
	Result *agent.Result // KindTurnEnded
	Err    error         // KindTurnEnded; KindPermissionAnswer when withdrawn

	Question *Question // KindPermission, KindPermissionAnswer
	Verdict  *Verdict  // KindPermissionAnswer
	Queued   int       // KindPermission, KindPermissionAnswer: questions waiting now

	Peer     *peer.Message    // KindPeerMessage (peer.go)
	Firing   *schedule.Firing // KindScheduled
	Schedule *schedule.State  // KindSchedule
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
	q        *fifo.Queue[Event]
	done     func(*Subscription)
}

func (s *Subscription) push(e Event) {
	var replace func(Event) bool
	if s.coalesce && e.coalescable() {
		replace = func(last Event) bool { return last.coalescable() && last.Task.State.ID == e.Task.State.ID }
	}
	s.q.PushOr(e, replace)
}

// TryNext returns the next queued event without waiting.
func (s *Subscription) TryNext() (Event, bool) { return s.q.TryNext() }

// Next waits for the next event. It returns ErrClosed once the
// subscription is closed and drained, or ctx's cause.
func (s *Subscription) Next(ctx context.Context) (Event, error) { return s.q.Next(ctx, ErrClosed) }

// Close ends the subscription: no more events are queued; those queued
// can still be read.
func (s *Subscription) Close() {
	if s.q.Close() && s.done != nil {
		s.done(s)
	}
}

// bus fans events out to subscriptions.
type bus struct {
	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	closed bool // a subscription made after close is closed at once
}

func (b *bus) subscribe(coalesce bool) *Subscription {
	s := &Subscription{coalesce: coalesce, q: fifo.New[Event]()}
	s.done = func(s *Subscription) {
		b.mu.Lock()
		delete(b.subs, s)
		b.mu.Unlock()
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		s.q.Close()
		return s
	}
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
	b.closed = true
	subs := make([]*Subscription, 0, len(b.subs))
	for s := range b.subs {
		subs = append(subs, s)
	}
	b.mu.Unlock()
	for _, s := range subs {
		s.Close()
	}
}
