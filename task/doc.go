// Package task is the background-task framework: one registry for every
// asynchronous unit of a session (background shells, local and remote
// agents, in-process teammates, workflows, MCP monitors, dreams).
//
// Each task has a prefixed id (see Type.Prefix), a status that moves
// pending -> running -> completed | failed | killed and never leaves a
// terminal status, the common fields of State and type-specific data in
// State.Detail. State values are snapshots: the registry hands out copies,
// and changes go through Registry.Update, a function from the old state to
// the new one. An update that returns its input unchanged is a no-op and
// wakes no subscriber.
//
// Output goes to a per-session file (OutputDir) opened without following
// symlinks and capped in size; Registry.Poll reports what was added since
// the last report, by offset, and evicts terminal, notified tasks once their
// grace period is over. Completion produces exactly one notification per
// task: Registry.Notify is an atomic check-and-set of State.Notified, and the
// winner emits one EventTerminated carrying the <task-notification> text for
// the model (empty when the task was stopped on purpose).
//
// StartShell runs a background shell (own process group, output captured,
// exit code recorded, a stall watchdog for interactive prompts); Go runs an
// in-process task such as a background agent; KillForAgent stops the shells
// of an agent that exits. Event.StreamJSON gives the stream-json form of
// task_started and task_terminated.
//
// A Registry is safe for concurrent use. Events reach each Subscription in
// the order the registry made the changes; delivery never blocks the
// registry (subscription queues are unbounded). Every goroutine the registry
// starts (the poll loop, shell capture, waiters and stall watchdogs) is
// stopped and waited for by Close; Close kills the running shells.
package task
