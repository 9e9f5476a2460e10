// Package mailbox models the per-agent inboxes of a team: the message
// envelope (an inbox entry of docs/protocol.md section 4), the structured
// protocol frames carried in a message's text (section 6), and the Store
// that delivers messages.
//
// # Delivery semantics
//
// Every Store implementation gives these guarantees, checked by the
// conformance suite in mailboxtest:
//
//   - A Send either stores the message durably in every recipient's inbox
//     and returns nil, or returns an error. A message is never dropped
//     silently: a caller that got nil can read its message back.
//   - An error means the message was not delivered and will not land later,
//     so retrying does not duplicate it; the one exception is an error
//     matching ErrOutcomeUnknown (the store lost track of the write, for
//     example another process took it and has not finished), after which the
//     caller should read the inbox before sending again.
//   - The recipient must be on the team's roster; otherwise Send fails with
//     an *UnknownRecipientError that lists the valid names, and no inbox is
//     created.
//   - To "*" broadcasts to every member except the sender.
//   - Every stored message has a unique id (msg_id); each recipient of a
//     broadcast gets its own id. Read and MarkRead work by id.
//   - Messages from one sender to one recipient are read in the order they
//     were sent. Concurrent senders are ordered by the store.
//   - Watch wakes a reader soon after a write (milliseconds, not a poll
//     period) with a coalesced signal: one kick may stand for many messages,
//     so a reader re-reads on every kick.
//   - Read messages beyond the store's retention bound are pruned, oldest
//     first, so an inbox never grows without bound. Unread messages are never
//     pruned.
//
// Implementations are safe for concurrent use.
package mailbox
