// Package swarm is the team runtime: the lead's side (create and delete a
// team, spawn teammates through a backend, read the lead's inbox, answer
// permission requests, coalesce idle notifications, supervise teammates)
// and the teammate's side (the runner loop).
//
// # A teammate's life
//
// A Teammate runs its prompt, then sends the lead one idle notification
// (with the summary of the last message it sent a peer, the task it
// completed, and its final answer when that answer was not sent to anyone,
// so a report printed instead of sent still reaches the lead). It then
// waits, woken by its inbox watch or the task list's watch (never a fixed
// sleep), for a message, a task it may claim (pending, unowned, every
// blocker completed), or a shutdown request, and runs again. Messages that
// arrive while it works reach its model at the next tool-round boundary.
// A shutdown request reaches the model with instructions to answer it; an
// approving answer ends the teammate after its turn.
//
// # The lead
//
// Lead implements the lead's tools (TeamCreate, TeamDelete, spawning with
// the Agent tool). Its inbox loop turns teammate messages into input for
// the lead's model and handles the protocol frames itself: idle
// notifications are coalesced into one digest taken with the lead's next
// input (TakeDigest), permission requests are answered by the configured
// Answerer (allow once, allow always for the whole team, or deny with
// feedback), approved shutdowns end the teammate's process or goroutine
// (killed when it does not exit in time), close its pane, remove it from
// the team and release its tasks. A teammate whose process or goroutine
// dies is detected through its backend handle, what it left running is
// reaped (LeadConfig.Reap), it is marked dead (distinct from idle), its
// tasks released, and the lead told. A lead whose process died comes back
// through Reattach: the team its session created is its own again.
package swarm
