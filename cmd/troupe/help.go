package main

import (
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagGroups are the sections of the root command's help, in order; a
// flag in none of them is listed under "Other flags".
var flagGroups = []struct {
	title string
	flags []string
}{
	{"Running one agent (-p)", []string{"print", "output-format", "provider", "model", "script", "max-turns", "cwd", "add-dir", "system-prompt", "transcript"}},
	{"Sessions", []string{"resume", "continue"}},
	{"Budgets", []string{"max-budget-usd", "max-tokens"}}, // budget.go
	{"Permissions", []string{"permission-mode", "allowedTools", "disallowedTools", "dangerously-skip-permissions", "permission-prompt-command", "permission-prompt-timeout", "audit"}},
	{"Agent teams and coordinator mode", []string{"agent-teams", "teammate-mode", "teammate-command", "idle-digest", "permission-answer-timeout", "shutdown-answer-timeout", "keep-team", "coordinator", "worktrees", "worktree-dir", "fork-subagents"}},
	{"Stores (every command)", []string{"home", "store", "json", "nats-token", "nats-creds", "nats-ca", "nats-cert", "nats-key", "nats-namespace"}},
}

// internalFlags are the flags a lead gives the teammate processes it
// starts (PROTOCOL.md 10.2, and Claude Code's spelling of
// --disallowedTools it passes through): accepted, not shown in help.
var internalFlags = []string{"agent-id", "agent-name", "team-name", "agent-color", "parent-session-id", "plan-mode-required",
	"lead-verify-key", "agent-type", "disallowed-tools"}

var addTemplateFunc sync.Once

// groupHelp hides the internal flags and gives the root command's help
// its sections; subcommands keep cobra's layout.
func groupHelp(root *cobra.Command) {
	for _, name := range internalFlags {
		_ = root.Flags().MarkHidden(name)
	}
	// cobra keeps template functions in a package variable: set it once,
	// before any command runs, as Main.Run may run concurrently.
	addTemplateFunc.Do(func() { cobra.AddTemplateFunc("groupedFlags", groupedFlags) })
	tmpl := root.UsageTemplate()
	const flags = `{{if .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

Global Flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}`
	if strings.Contains(tmpl, flags) {
		tmpl = strings.Replace(tmpl, flags, `{{if not .HasParent}}{{groupedFlags .}}{{else}}`+flags+`{{end}}`, 1)
		root.SetUsageTemplate(tmpl)
	}
}

// groupedFlags renders c's visible flags by section.
func groupedFlags(c *cobra.Command) string {
	all := c.Flags()
	seen := map[string]bool{}
	var b strings.Builder
	section := func(title string, names []string) {
		fs := pflag.NewFlagSet(title, pflag.ContinueOnError)
		for _, n := range names {
			if f := all.Lookup(n); f != nil && !f.Hidden && !seen[n] {
				seen[n] = true
				fs.AddFlag(f)
			}
		}
		fs.SortFlags = false
		if fs.HasAvailableFlags() {
			b.WriteString("\n\n" + title + ":\n" + strings.TrimRight(fs.FlagUsages(), " \n"))
		}
	}
	for _, g := range flagGroups {
		section(g.title, g.flags)
	}
	var rest []string
	all.VisitAll(func(f *pflag.Flag) {
		if !seen[f.Name] {
			rest = append(rest, f.Name)
		}
	})
	section("Other flags", rest)
	return b.String()
}
