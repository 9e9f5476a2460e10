package task

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors.
var (
	ErrClosed     = errors.New("task: registry closed")
	ErrNotFound   = errors.New("task: not found")
	ErrNotRunning = errors.New("task: not running")
	ErrExists     = errors.New("task: already exists")
	// ErrTerminal is wrapped by a TransitionError out of a terminal status.
	ErrTerminal = errors.New("task: terminal status is final")
	// ErrTransition is wrapped by any other refused TransitionError.
	ErrTransition = errors.New("task: illegal status transition")
	ErrBadDetail  = errors.New("task: bad detail")
	ErrSymlink    = errors.New("task: output file is a symlink")
)

// Type is the kind of a task.
type Type string

// Task types.
const (
	LocalBash         Type = "local_bash"
	LocalAgent        Type = "local_agent"
	RemoteAgent       Type = "remote_agent"
	InProcessTeammate Type = "in_process_teammate"
	LocalWorkflow     Type = "local_workflow"
	MonitorMCP        Type = "monitor_mcp"
	Dream             Type = "dream"
)

// Types lists every task type.
var Types = []Type{LocalBash, LocalAgent, RemoteAgent, InProcessTeammate, LocalWorkflow, MonitorMCP, Dream}

// Prefix returns the one-letter id prefix of t, or "" for an unknown type.
func (t Type) Prefix() string {
	switch t {
	case LocalBash:
		return "b"
	case LocalAgent:
		return "a"
	case RemoteAgent:
		return "r"
	case InProcessTeammate:
		return "t"
	case LocalWorkflow:
		return "w"
	case MonitorMCP:
		return "m"
	case Dream:
		return "d"
	}
	return ""
}

// Valid reports whether t is a known type.
func (t Type) Valid() bool { return t.Prefix() != "" }

// Status is where a task is in its life.
type Status string

// Statuses.
const (
	Pending   Status = "pending"
	Running   Status = "running"
	Completed Status = "completed"
	Failed    Status = "failed"
	Killed    Status = "killed"
)

// Statuses lists every status.
var Statuses = []Status{Pending, Running, Completed, Failed, Killed}

// Terminal reports whether s is final: completed, failed or killed.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Killed }

// Active reports whether s is pending or running.
func (s Status) Active() bool { return s == Pending || s == Running }

// TransitionError is a refused status change.
type TransitionError struct {
	ID       ID
	From, To Status
	Err      error // ErrTerminal or ErrTransition
}

// Error implements error.
func (e *TransitionError) Error() string {
	if e.ID != "" {
		return fmt.Sprintf("task %s: %s -> %s: %v", e.ID, e.From, e.To, e.Err)
	}
	return fmt.Sprintf("task: %s -> %s: %v", e.From, e.To, e.Err)
}

// Unwrap returns ErrTerminal or ErrTransition.
func (e *TransitionError) Unwrap() error { return e.Err }

// CheckTransition reports whether a task may move from one status to
// another. Staying put is always allowed (it is not a transition). Legal
// moves: pending -> running, pending -> failed (it could not start),
// pending -> killed (stopped before it started), and running -> completed,
// failed or killed. Nothing leaves a terminal status. It is a pure function.
func CheckTransition(from, to Status) error {
	if from == to {
		return nil
	}
	if from.Terminal() {
		return &TransitionError{From: from, To: to, Err: ErrTerminal}
	}
	ok := false
	switch from {
	case Pending:
		ok = to == Running || to == Failed || to == Killed
	case Running:
		ok = to.Terminal()
	}
	if !ok {
		return &TransitionError{From: from, To: to, Err: ErrTransition}
	}
	return nil
}

// ID is a task id: the type's prefix and 8 base-36 characters.
type ID string

// idLen is the number of random characters of an id.
const idLen = 8

const base36 = "0123456789abcdefghijklmnopqrstuvwxyz"

// NewID returns a fresh id for a task of type t, from crypto/rand.
func NewID(t Type) ID {
	var b strings.Builder
	b.WriteString(t.Prefix())
	var buf [16]byte
	for n := 0; n < idLen; {
		rand.Read(buf[:]) // never fails (crypto/rand contract since Go 1.24)
		for _, c := range buf {
			// 252 = 7*36: reject the rest so that every character is equally likely.
			if c < 252 && n < idLen {
				b.WriteByte(base36[c%36])
				n++
			}
		}
	}
	return ID(b.String())
}

// TypeOf returns the type an id's prefix names, or "" when it names none.
func (id ID) TypeOf() Type {
	if len(id) != 1+idLen {
		return ""
	}
	for _, t := range Types {
		if string(id[:1]) == t.Prefix() {
			return t
		}
	}
	return ""
}

// State is one task as the registry holds it. It is a plain value: it is
// comparable with ==, and Detail, a pointer to type-specific data, is
// compared by identity, so a Detail must be treated as immutable (an update
// that changes it builds a new one, see the With methods).
type State struct {
	ID          ID
	Type        Type
	Status      Status
	Description string
	ToolUseID   string
	Start       time.Time
	End         time.Time     // zero until terminal
	Paused      time.Duration // total time spent paused
	// OutputFile is the path of the task's output file, "" when it has none.
	OutputFile string
	// OutputOffset is how far the output has been reported (see Poll).
	OutputOffset int64
	// Notified is set once the completion notification went out (or was
	// suppressed, as for a stopped task); it never goes back.
	Notified bool
	// Retain keeps a terminal task from eviction while the UI holds it.
	Retain bool
	// EvictAfter is when a terminal, notified task may be evicted.
	EvictAfter time.Time
	// Detail is the type-specific data; nil or of the task's Type.
	Detail Detail
}

// Duration returns how long the task has run by now (or ran, when over),
// less the time paused.
func (s State) Duration(now time.Time) time.Duration {
	end := s.End
	if end.IsZero() {
		end = now
	}
	return end.Sub(s.Start) - s.Paused
}
