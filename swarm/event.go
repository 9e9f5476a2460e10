package swarm

import "time"

// Event is one line of a team's timeline: something a teammate or the
// lead did that a person watching would want to see.
type Event struct {
	Time  time.Time
	Agent string // who: a member name
	Kind  string // one of the Event* kinds
	Text  string
	// Body is a message's whole text (EventMessage), where Text has its
	// summary or first line.
	Body string
}

// Kinds of Event.
const (
	EventCreated    = "created"    // the team was created
	EventSpawned    = "spawned"    // a teammate started
	EventFallback   = "fallback"   // a pane backend failed; the teammate runs in-process
	EventMessage    = "message"    // the lead received a message
	EventIdle       = "idle"       // a teammate finished its turn
	EventDigest     = "digest"     // idle notifications handed to the lead as one message
	EventClaim      = "claim"      // a teammate claimed a task
	EventPermission = "permission" // a permission request or answer
	EventPlan       = "plan"       // plan approval
	EventShutdown   = "shutdown"   // shutdown request, approval or rejection
	EventExit       = "exit"       // a teammate ended cleanly
	EventDead       = "dead"       // a teammate died unexpectedly
	EventDeleted    = "deleted"    // the team was deleted
	EventRemoved    = "removed"    // the team was removed as the lead's session ended
	EventWarning    = "warning"    // something was ignored or failed
	EventHook       = "hook"       // a user's hook changed the course (a teammate kept working)
)
