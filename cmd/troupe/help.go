package main

import (
	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/cli"
)

// flagGroups are the sections of the root command's help, in order; a
// flag in none of them is listed under "Other flags".
var flagGroups = []cli.FlagGroup{
	{Title: "Running one agent (-p)", Flags: []string{"print", "output-format", "provider", "model", "script", "max-turns", "cwd", "trust", "add-dir", "system-prompt", "transcript"}},
	{Title: "Sessions", Flags: []string{"resume", "continue", "name", "no-peer-messages"}},
	{Title: "Budgets", Flags: []string{"max-budget-usd", "max-tokens"}}, // budget.go
	{Title: "Permissions", Flags: []string{"permission-mode", "allowedTools", "disallowedTools", "dangerously-skip-permissions", "permission-prompt-command", "permission-prompt-timeout", "audit"}},
	{Title: "Agent teams and coordinator mode", Flags: []string{"agent-teams", "teammate-mode", "teammate-command", "idle-digest", "permission-answer-timeout", "shutdown-answer-timeout", "keep-team", "coordinator", "worktrees", "worktree-dir", "fork-subagents", "workflows", "workflow-concurrency"}},
	{Title: "Stores (every command)", Flags: []string{"home", "store", "json", "nats-token", "nats-creds", "nats-ca", "nats-cert", "nats-key", "nats-namespace"}},
}

// internalFlags are the flags a lead gives the teammate processes it
// starts (docs/protocol.md section 10.2, and Claude Code's spelling of
// --disallowedTools it passes through): accepted, not shown in help.
var internalFlags = []string{"agent-id", "agent-name", "team-name", "agent-color", "parent-session-id", "plan-mode-required",
	"lead-verify-key", "agent-type", "disallowed-tools"}

// groupHelp hides the internal flags and gives the root command's help
// its sections; subcommands keep cobra's layout.
func groupHelp(root *cobra.Command) {
	for _, name := range internalFlags {
		_ = root.Flags().MarkHidden(name)
	}
	cli.GroupHelp(root, flagGroups)
}
