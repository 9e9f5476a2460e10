// Package kit assembles agents: it is where every kind of agent troupe runs
// gets its model, tools, permissions, hooks, MCP servers, instructions,
// transcripts and telemetry, so that front ends (cmd/troupe's headless and
// interactive leads, the pane teammate process, troupe worker) never build
// one themselves.
//
//   - Tools and ToolOptions (tools.go): the tools of any agent, sub-agents
//     included, rooted at a working folder.
//   - NewLeadTeam and LeadTeam (lead.go): a lead's team runtime (swarm.Lead)
//     with its teammates' launch, answers and team tools.
//   - Teammate (teammate.go): one teammate, in-process or in a pane.
//   - Context (context.go): what an agent is told and the MCP servers and
//     hooks it has, read from a project's files once it is trusted.
//   - the coordinator's workers (coordinator.go), remote jobs and workers
//     (remote.go, worker.go), dream (dream.go), worktrees (worktrees.go),
//     budgets (spend.go, budget_end.go) and metrics (metrics.go).
//
// docs/architecture.md places it among the layers.
package kit
