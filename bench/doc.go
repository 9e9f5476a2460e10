// Package bench measures troupe's file store with the scenarios of the
// peer baseline (docs/benchmarks.md, "The peer's scenarios"), so that the two can be put
// side by side on one machine.
//
// Every writer, watcher and claimer is a separate operating-system process,
// as in the peer's Node scripts: the Runner re-executes a program (the
// troupe binary, or a test binary) with a child argument list, and each
// child opens the store itself, reports "ready" and waits at a barrier (a
// command line on its stdin) so that all children start together. Children
// report one JSON line per operation on stdout; the Runner aggregates the
// lines, computes percentiles exactly from every recorded sample, and then
// verifies what is on disk against what the children were told: messages
// lost after an acknowledged send, duplicates, phantoms, double claims.
//
// Scenarios:
//
//   - Writers (B1, B2, B3): W writer processes × M messages into one inbox,
//     optionally preloaded.
//   - Delivery (B4): one writer at random gaps, one watcher process using
//     mailbox.Store.Watch and Read; latency from the send's call (and,
//     beside it, from its return) to the watcher's first sight of the
//     message.
//   - Race (B6): A claimer processes race tasklist.List.ClaimTask on one
//     fresh task per round.
//   - Drain (B7): A agent processes Claim and complete independent tasks:
//     two writes a task, where the peer's replica makes three (claim, then
//     in_progress, then completed); the report says so beside the figure.
//   - Interop (B8): troupe writers and the peer's Node writers (the replica
//     in peer-bench, with proper-lockfile) into one inbox.
//
// This package does not import os/exec: the import rules keep process
// spawning in cmd and a few adapters, so the caller injects a StartFunc.
//
// A Runner is not safe for concurrent use; run one scenario at a time (they
// compete for the same CPUs anyway).
package bench
