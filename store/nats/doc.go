// Package nats stores teams, mailboxes and task lists in NATS JetStream, so
// that the members of one team can run on several machines. A Store's views
// Teams, Mail and Tasks implement team.Store, mailbox.Store and
// tasklist.Store and pass the same conformance suites as store/file
// (teamtest, mailboxtest, tasklisttest).
//
// # Layout
//
// With the default namespace ("troupe"; Options.Namespace changes the
// prefix so that independent installations can share a server):
//
//	KV   troupe_v1_teams      <team>                   team file (JSON, as on disk)
//	KV   troupe_v1_tasks      <list>.t.<id>            task (JSON, as on disk)
//	                          <list>.high              highest task id ever allocated
//	                          <list>.lock              task-list lock (tasklist.Store.Lock)
//	                          (teams bucket) <team>.lock  team lock (Update, Delete)
//	KV   troupe_v1_mailread   <team>.<agent>           read marks of one inbox
//	     stream troupe_v1_mail  troupe.v1.mail.<team>.<agent>.<msg_id>  one message each
//
// Names that are not made only of [A-Za-z0-9_-] are encoded as "=" followed
// by their unpadded base32, so any name maps to one valid subject token and
// key segment and no two names collide. Every stream carries the metadata
// key troupe_schema; Open refuses, naming it, a stream or bucket of another
// schema or with a configuration the store cannot work with.
//
// # Delivery semantics
//
// Send publishes one JetStream message per recipient and returns only after
// the server acknowledged that it stored it, so a message is durable (to the
// server's storage and replication settings) when Send returns nil. A
// single server with JetStream's default flush (every two minutes) may lose
// acknowledged messages if its machine crashes; troupe serve flushes every
// write. Each publish carries the message's inbox and id as its
// Nats-Msg-Id: a publish retried after a lost acknowledgement, a timeout or
// a reconnect (Send retries those, with backoff, until its ctx ends or
// Options.SendTimeout passes) is stored once. Every other command retries
// the same way until Options.RequestTimeout. Both bounds count only the
// time the store is connected: a command waits out an outage of any length
// until its ctx ends (outage.go). A retried compare-and-swap
// write whose first attempt landed is recognised by reading the key back,
// not reported as a conflict (see retry.go). The stream sequence orders an
// inbox: one sender's messages keep their order, and concurrent senders are
// ordered by the server.
//
// Read scans an inbox with a short-lived consumer and marks each message
// read or unread from the inbox's read marks, a KV entry updated with
// compare-and-swap by MarkRead. When more than KeepRead messages are read,
// MarkRead deletes the oldest read ones from the stream; unread messages are
// never deleted. Read marks are kept in KV rather than as acknowledgements
// of a durable consumer because messages are marked by id, in any order, by
// any of the processes that read one inbox (a teammate, its lead, the CLI),
// and a reader must see every message with its flag, not only the
// unacknowledged ones.
//
// Watch is push-based: an ordered consumer on the inbox's subjects, started
// just after the stream's last message and delivering headers only, kicks
// the channel once per stored message (coalesced in a 1-slot channel). It
// resumes where it stopped after a reconnect, and every watch is kicked
// once when the connection is re-established, since a kick may be spurious
// but must not be missed.
//
// # Teams and task lists
//
// A team file is one KV entry. Update and Delete hold the team's lock (a
// KV entry beside it, the same kind of lock as a task list's) so that fn
// and check run once on the current team, and write with compare-and-swap.
// Delete replaces the entry with a tombstone (the team reads as absent
// from then on), purges the team's mailboxes, read marks and task list,
// and then removes the tombstone. A delete cut short leaves the tombstone,
// and the next Create or Delete of the name finishes it. Create purges
// messages that an earlier team of the same name left behind.
//
// A task's tasklist.Revision is its KV revision; Put and Delete are
// compare-and-swap on it. Ids come from a counter entry advanced by
// compare-and-swap, so they are allocated race-free by any number of
// processes and never reused. The list lock is a KV entry created by its
// holder and refreshed every LockStale/3; a waiter watches the entry and
// takes it over when it was deleted or when its revision did not change for
// LockStale (measured on the waiter's clock, so clocks need not agree).
//
// # Connection
//
// Open connects once and fails, naming the URL, when the server cannot be
// reached, refuses the credentials or has no JetStream. Later disconnects
// are retried forever with capped exponential backoff; disconnects,
// reconnects and asynchronous errors are logged through Options.Logger.
//
// A Store is safe for concurrent use by goroutines and processes.
package nats
