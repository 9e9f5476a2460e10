// Package troupe is the root of the troupe module: a multi-agent runtime in
// which a lead and its teammates, in-process or in terminal panes, work on
// one codebase through per-agent mailboxes and a shared task list, with
// permissions that bubble up to the lead, background tasks and coordinator
// mode. The binary is cmd/troupe.
//
// The module's map is docs/architecture.md: the layers (vocabulary,
// primitives, adapters, task, agent, swarm, session, front ends, cli, cmd),
// each package's role, and where a new subcommand, tool, store, backend,
// provider or front end goes. docs/protocol.md is the file protocol troupe
// shares with Claude Code. This package holds no code: its tests
// (ranks_test.go, deps_test.go) enforce the layering.
package troupe
