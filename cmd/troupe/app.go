package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/cli/agentscmd"
	"github.com/troupe-dev/troupe/cli/benchcmd"
	"github.com/troupe-dev/troupe/cli/contextcmd"
	"github.com/troupe-dev/troupe/cli/dashboardcmd"
	"github.com/troupe-dev/troupe/cli/hookscmd"
	"github.com/troupe-dev/troupe/cli/inboxcmd"
	"github.com/troupe-dev/troupe/cli/mate"
	"github.com/troupe-dev/troupe/cli/mcpcmd"
	"github.com/troupe-dev/troupe/cli/permissionscmd"
	"github.com/troupe-dev/troupe/cli/servecmd"
	"github.com/troupe-dev/troupe/cli/sessionscmd"
	"github.com/troupe-dev/troupe/cli/taskcmd"
	"github.com/troupe-dev/troupe/cli/teamcmd"
	"github.com/troupe-dev/troupe/cli/transcriptcmd"
	"github.com/troupe-dev/troupe/cli/trustcmd"
	"github.com/troupe-dev/troupe/cli/usagecmd"

	"github.com/troupe-dev/troupe/session/kit"
)

// Main is one invocation of the troupe command line. Its fields are the
// process environment, injected so that tests run commands in-process; the
// zero value of each field means the real one (os.Stdin, os.Getenv, the
// file store, ...).
type Main cli.Env

// Stores are the persistence services the commands operate on.
type Stores = cli.Stores

// UsageError reports a malformed command line; main exits with status 2
// for it.
type UsageError = cli.UsageError

// ExitError ends the process with its code after the command printed its
// result.
type ExitError = cli.ExitError

// kitStores returns the stores an agent of a team works on.
func kitStores(s Stores) kit.Stores { return kit.Stores{Teams: s.Teams, Mail: s.Mail, Tasks: s.Tasks} }

// newApp returns the state of one run over m.
func newApp(m Main) *app { return &app{App: cli.New(cli.Env(m))} }

// Run parses args (without the program name) and runs the command they
// name. It returns nil on success, a *UsageError for a malformed command
// line, and any other error when the command failed.
func (m *Main) Run(ctx context.Context, args []string) error {
	a := newApp(*m)
	root := a.rootCommand()
	wrapRunE(root, &a.started)
	if args == nil {
		args = []string{} // nil makes cobra read os.Args
	}
	root.SetArgs(args)
	root.SetIn(a.Stdin)
	root.SetOut(a.Stdout)
	root.SetErr(a.Stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return nil
	}
	if id, ok := mate.IdentityOf(args); ok && !a.joined {
		mate.StartFailed(a.App, id, err)
	}
	var ue *UsageError
	if !errors.As(err, &ue) {
		if a.started {
			return err
		}
		// Cobra itself refused the command line before running anything.
		ue = &UsageError{Err: err}
		err = ue
	}
	if ue.Cmd == "" && cmd != nil {
		ue.Cmd = cmd.CommandPath()
	}
	return err
}

// wrapRunE makes every RunE in the tree set *started before it runs, so
// that Run can tell cobra's own refusals (flags, arguments, unknown
// commands: usage errors) from failures of a command that ran.
func wrapRunE(c *cobra.Command, started *bool) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			*started = true
			return run(cmd, args)
		}
	}
	for _, sub := range c.Commands() {
		wrapRunE(sub, started)
	}
}

// app is the state of one Run: what every subcommand shares (the injected
// environment and the root's persistent flags) and the lead's own.
type app struct {
	*cli.App
	started bool
	joined  bool       // a teammate process started working (teammate_fail.go)
	hooks   *kit.Hooks // the settings' hooks of this run, read once (hooks.go)
	mcp     mcpState   // MCP servers as tools (mcp.go)
	// tel traces this process's agents (telemetry.go).
	tel teamTelemetry
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "troupe",
		Short: "A multi-agent runtime: teams, mailboxes and shared task lists",
		Long: `troupe runs teams of agents that talk through mailboxes and share a task list.

The team, inbox and task commands inspect and operate the stores directly,
for people and scripts. The stores live under --home (default $TROUPE_HOME,
else ~/.troupe); --home ~/.claude shares Claude Code's folder.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		// Within two edits, as cobra suggests for unknown subcommands.
		SuggestionsMinimumDistance: 2,
	}
	h := &headless{}
	a.addMCPFlags(root) // mcp.go; before the teammate flags, which would ignore them
	a.addHeadlessFlags(root, h)
	root.RunE = func(cmd *cobra.Command, args []string) error { return a.runRoot(cmd, args, h) }
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &UsageError{Cmd: cmd.CommandPath(), Err: err}
	})
	a.AddPersistentFlags(root)
	defer groupHelp(root) // help.go: once every flag is defined
	root.AddCommand(
		a.versionCommand(),
		teamcmd.New(a.App),
		inboxcmd.New(a.App),
		taskcmd.New(a.App),
		benchcmd.New(a.App),
		permissionscmd.New(a.App),
		contextcmd.New(a.App),
		transcriptcmd.New(a.App),
		a.demoCommand(),
		servecmd.New(a.App),
		a.workerCommand(),
		agentscmd.New(a.App),
		a.dreamCommand(), // dream.go
		hookscmd.New(a.App),
		mcpcmd.New(a.App),
		dashboardcmd.New(a.App),
		usagecmd.New(a.App),
		trustcmd.New(a.App),
		sessionscmd.New(a.App),
		a.workflowCommand(), // workflows.go
	)
	return root
}
