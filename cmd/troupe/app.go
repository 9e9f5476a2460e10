package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// DefaultHome is the store root used when neither --home nor $TROUPE_HOME
// is set.
const DefaultHome = "~/.troupe"

// Main is one invocation of the troupe command line. Its fields are the
// process environment, injected so that tests run commands in-process; the
// zero value of each field means the real one (os.Stdin, os.Getenv, the
// file store, ...).
type Main struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads an environment variable.
	Getenv func(key string) string
	// HomeDir returns the user's home folder, for expanding a leading ~.
	HomeDir func() (string, error)
	// Getwd returns the working folder recorded as a member's cwd.
	Getwd func() (string, error)
	// OpenStore opens the stores rooted at home (an absolute path).
	OpenStore func(home string) (Stores, error)
	// Now is the clock for timestamps.
	Now func() time.Time
	// Version is the build's version string.
	Version string
	// NewID returns a new session id.
	NewID func() string
}

// Stores are the persistence services the commands operate on.
type Stores struct {
	Teams team.Store
	Mail  mailbox.Store
	Tasks tasklist.Store
	// Close releases the stores; nil means there is nothing to release.
	Close func() error
}

// kit returns the stores an agent of a team works on.
func (s Stores) kit() kit.Stores { return kit.Stores{Teams: s.Teams, Mail: s.Mail, Tasks: s.Tasks} }

// UsageError reports a malformed command line: an unknown command or flag,
// a missing or extra argument, or a value that fails validation before any
// store is touched. main exits with status 2 for it.
type UsageError struct {
	Cmd string // command path, such as "troupe task update"
	Err error
}

func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *UsageError) Unwrap() error { return e.Err }

// usagef returns a *UsageError with a formatted message.
func usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// Run parses args (without the program name) and runs the command they
// name. It returns nil on success, a *UsageError for a malformed command
// line, and any other error when the command failed.
func (m *Main) Run(ctx context.Context, args []string) error {
	a := &app{Main: m.withDefaults()}
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
	if id, ok := teammateIdentity(args); ok && !a.joined {
		a.teammateStartFailed(id, err) // teammate_fail.go
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

func (m *Main) withDefaults() Main {
	c := *m
	if c.Stdin == nil {
		c.Stdin = os.Stdin
	}
	if c.Stdout == nil {
		c.Stdout = os.Stdout
	}
	if c.Stderr == nil {
		c.Stderr = os.Stderr
	}
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	if c.HomeDir == nil {
		c.HomeDir = os.UserHomeDir
	}
	if c.Getwd == nil {
		c.Getwd = os.Getwd
	}
	if c.OpenStore == nil {
		c.OpenStore = OpenFileStore
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	if c.NewID == nil {
		c.NewID = mailbox.NewID
	}
	return c
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

// app is the state of one Run: the injected environment and the values of
// the root's persistent flags.
type app struct {
	Main
	homeFlag string
	jsonOut  bool
	started  bool
	joined   bool       // a teammate process started working (teammate_fail.go)
	storeSel storeFlags // --store and the NATS options (store.go)
	warned   sync.Map   // warnings already printed (warnOnce)
	hooks    *kit.Hooks // the settings' hooks of this run, read once (hooks.go)
	mcp      mcpState   // MCP servers as tools (mcp.go)
	// tel traces this process's agents (telemetry.go).
	tel teamTelemetry
}

// warnOnce prints a warning on stderr, once per process however many
// agents run into it (a malformed skill file is found by each).
func (a *app) warnOnce(msg string) {
	if _, dup := a.warned.LoadOrStore(msg, true); !dup {
		fmt.Fprintf(a.Stderr, "troupe: warning: %s\n", termtext.Clean(msg))
	}
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
	pf := root.PersistentFlags()
	pf.StringVar(&a.homeFlag, "home", "", "store root `DIR` (default $TROUPE_HOME, else "+DefaultHome+")")
	pf.BoolVar(&a.jsonOut, "json", false, "print machine-readable JSON (JSON lines for inbox watch)")
	a.storeSel.add(pf)
	defer groupHelp(root) // help.go: once every flag is defined
	root.AddCommand(
		a.versionCommand(),
		a.teamCommand(),
		a.inboxCommand(),
		a.taskCommand(),
		a.benchCommand(),
		a.permissionsCommand(),
		a.contextCommand(),
		a.transcriptCommand(),
		a.demoCommand(),
		a.serveCommand(),
		a.workerCommand(),
		a.agentsCommand(), // agents.go
		a.dreamCommand(),  // dream.go
		a.hooksCommand(),  // hooks_cmd.go
		a.mcpCommand(),    // mcp_cmd.go
		a.dashboardCommand(),
		a.usageCommand(), // usage.go
	)
	return root
}

// group returns a parent command that only holds subcommands. Run without
// a subcommand it prints its help; with an unknown one it is a usage error.
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ArbitraryArgs,
		// Suggest commands within two edits, as cobra does for the root.
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
			}
			return &UsageError{Cmd: cmd.CommandPath(), Err: errors.New(msg)}
		},
	}
	c.AddCommand(subs...)
	return c
}

// positional returns an Args validator for the named arguments; names in
// square brackets are optional. Its errors name the argument.
func positional(names ...string) cobra.PositionalArgs {
	required := 0
	for _, n := range names {
		if !strings.HasPrefix(n, "[") {
			required++
		}
	}
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < required {
			return &UsageError{Cmd: cmd.CommandPath(), Err: fmt.Errorf("missing argument %s", strings.Join(names[len(args):required], " "))}
		}
		if len(args) > len(names) {
			return &UsageError{Cmd: cmd.CommandPath(), Err: fmt.Errorf("unexpected argument %q", args[len(names)])}
		}
		return nil
	}
}

// home returns the store root: --home, else $TROUPE_HOME, else
// DefaultHome, with a leading ~ expanded and made absolute.
func (a *app) home() (string, error) {
	h, src := a.homeFlag, "--home"
	if h == "" {
		h, src = a.Getenv("TROUPE_HOME"), "$TROUPE_HOME"
	}
	if h == "" {
		h, src = DefaultHome, "default home"
	}
	if strings.HasPrefix(h, "~") {
		rest := h[1:]
		if rest != "" && rest[0] != '/' && rest[0] != filepath.Separator {
			return "", usagef("%s %q: only a leading ~ or ~/ is expanded", src, h)
		}
		dir, err := a.HomeDir()
		if err != nil {
			return "", fmt.Errorf("%s %q: expand ~: %w", src, h, err)
		}
		h = filepath.Join(dir, rest)
	}
	abs, err := filepath.Abs(h)
	if err != nil {
		return "", fmt.Errorf("%s %q: %w", src, h, err)
	}
	return abs, nil
}

// opened is an open set of stores for one command.
type opened struct {
	*app
	Stores
	home string
}

// open opens the selected stores (see openStores). The caller closes the
// session with done.
func (a *app) open() (*opened, error) {
	st, where, err := a.openStores(context.Background())
	if err != nil {
		return nil, err
	}
	return &opened{app: a, Stores: st, home: where}, nil
}

// close closes the stores.
func (s *opened) close() error {
	if s.Close == nil {
		return nil
	}
	return s.Close()
}

// done closes the stores, folding a close error into *err; it is meant to
// be deferred.
func (s *opened) done(err *error) {
	if cerr := s.close(); cerr != nil && *err == nil {
		*err = fmt.Errorf("close store: %w", cerr)
	}
}

// team canonicalises a team name the user typed (flag names the flag or
// argument it came from) and loads the team. An unknown team is an error
// that lists the teams there are.
func (s *opened) team(ctx context.Context, flag, name string) (team.Config, error) {
	canon, err := team.CanonicalName(name)
	if err != nil {
		return team.Config{}, usagef("%s: %w", flag, err)
	}
	c, err := s.Teams.Get(ctx, canon)
	if err == nil {
		return c, nil
	}
	if !errors.Is(err, team.ErrNotFound) {
		return team.Config{}, fmt.Errorf("%s %s: %w", flag, canon, err)
	}
	all, _ := s.Teams.List(ctx) // best effort: only for the message
	if len(all) == 0 {
		return team.Config{}, describef(err, "%s: unknown team %q: there are no teams in %s (create one with 'troupe team create %s')", flag, canon, s.home, canon)
	}
	names := make([]string, len(all))
	for i, t := range all {
		names[i] = t.Name
	}
	return team.Config{}, describef(err, "%s: unknown team %q in %s; teams: %s", flag, canon, s.home, strings.Join(names, ", "))
}

// member checks that name is on c's roster; its error lists the members.
func member(c team.Config, flag, name string) error {
	if name == "" {
		return usagef("%s: empty name", flag)
	}
	if _, ok := c.Member(name); ok {
		return nil
	}
	hint := ""
	for _, n := range c.Names() {
		if strings.EqualFold(n, name) {
			hint = fmt.Sprintf(" (did you mean %q?)", n)
		}
	}
	return describef(team.ErrNoMember, "%s: team %s has no member %q%s; members: %s", flag, c.Name, name, hint, strings.Join(c.Names(), ", "))
}

// describedError gives a friendlier message to an error while keeping it
// matchable with errors.Is and errors.As.
type describedError struct {
	msg string
	err error
}

func (e *describedError) Error() string { return e.msg }
func (e *describedError) Unwrap() error { return e.err }

func describef(err error, format string, args ...any) error {
	return &describedError{msg: fmt.Sprintf(format, args...), err: err}
}
