// Package cli holds what troupe's subcommands share: the injected process
// environment, the root's persistent flags (--home, --json, --store and
// the NATS options), the stores they open, usage errors and table and JSON
// output. Each subcommand family lives in a package of its own below it
// (cli/taskcmd, cli/teamcmd, ...), the layout of gh's pkg/cmd; cmd/troupe
// assembles the root command from them and keeps the lead's wiring.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// DefaultHome is the store root used when neither --home nor $TROUPE_HOME
// is set.
const DefaultHome = "~/.troupe"

// Env is the process environment of one command line, injected so that
// tests run commands in-process; the zero value of each field means the
// real one (os.Stdin, os.Getenv, the file store, ...): see WithDefaults.
type Env struct {
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
	// KeepProcs records the process groups this process starts in a
	// ledger under <home>/procs (internal/procgroup), so that they are
	// killed if it dies. Only main sets it: the ledger is the process's,
	// and a test process runs many commands at once.
	KeepProcs bool
}

// WithDefaults returns e with every zero field set to the real one.
func (e Env) WithDefaults() Env {
	if e.Stdin == nil {
		e.Stdin = os.Stdin
	}
	if e.Stdout == nil {
		e.Stdout = os.Stdout
	}
	if e.Stderr == nil {
		e.Stderr = os.Stderr
	}
	if e.Getenv == nil {
		e.Getenv = os.Getenv
	}
	if e.HomeDir == nil {
		e.HomeDir = os.UserHomeDir
	}
	if e.Getwd == nil {
		e.Getwd = os.Getwd
	}
	if e.OpenStore == nil {
		e.OpenStore = OpenFileStore
	}
	if e.Now == nil {
		e.Now = time.Now
	}
	if e.Version == "" {
		e.Version = "dev"
	}
	if e.NewID == nil {
		e.NewID = mailbox.NewID
	}
	return e
}

// Stores are the persistence services the commands operate on.
type Stores struct {
	Teams team.Store
	Mail  mailbox.Store
	Tasks tasklist.Store
	// Close releases the stores; nil means there is nothing to release.
	Close func() error
}

// App is the state of one command line shared by every subcommand: the
// environment and the values of the root's persistent flags.
type App struct {
	Env
	// HomeFlag is --home; use Home for the resolved root.
	HomeFlag string
	// JSON is --json: print machine-readable JSON.
	JSON bool
	// StoreFlags are --store and the NATS options (store.go).
	StoreFlags StoreFlags
	warned     sync.Map // warnings already printed (WarnOnce)
}

// New returns the shared state of one command line over env.
func New(env Env) *App { return &App{Env: env.WithDefaults()} }

// AddPersistentFlags registers --home, --json and the store flags on the
// root command.
func (a *App) AddPersistentFlags(root *cobra.Command) {
	pf := root.PersistentFlags()
	pf.StringVar(&a.HomeFlag, "home", "", "store root `DIR` (default $TROUPE_HOME, else "+DefaultHome+")")
	pf.BoolVar(&a.JSON, "json", false, "print machine-readable JSON (JSON lines for inbox watch)")
	a.StoreFlags.add(pf)
}

// WarnOnce prints a warning on stderr, once per process however many
// agents run into it (a malformed skill file is found by each).
func (a *App) WarnOnce(msg string) {
	if _, dup := a.warned.LoadOrStore(msg, true); !dup {
		fmt.Fprintf(a.Stderr, "troupe: warning: %s\n", termtext.Clean(msg))
	}
}

// Home returns the store root: --home, else $TROUPE_HOME, else
// DefaultHome, with a leading ~ expanded and made absolute.
func (a *App) Home() (string, error) {
	h, src := a.HomeFlag, "--home"
	if h == "" {
		h, src = a.Getenv("TROUPE_HOME"), "$TROUPE_HOME"
	}
	if h == "" {
		h, src = DefaultHome, "default home"
	}
	if strings.HasPrefix(h, "~") {
		rest := h[1:]
		if rest != "" && rest[0] != '/' && rest[0] != filepath.Separator {
			return "", Usagef("%s %q: only a leading ~ or ~/ is expanded", src, h)
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

// UserHomes returns the user's home folder and the store root, each empty
// when it cannot be resolved: the places settings, skills and agent types
// are read from besides the project.
func (a *App) UserHomes() (user, troupe string) {
	if h, err := a.HomeDir(); err == nil {
		user = h
	}
	if th, err := a.Home(); err == nil {
		troupe = th
	}
	return user, troupe
}

// WorkDir returns the absolute working folder named by --cwd, the current
// folder when it is empty; a --cwd that is not a folder is a usage error.
func (a *App) WorkDir(dir string) (string, error) {
	if dir == "" {
		wd, err := a.Getwd()
		if err != nil {
			return "", err
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", Usagef("--cwd %s: not a folder", dir)
	}
	return dir, nil
}

// Opened is an open set of stores for one command.
type Opened struct {
	*App
	Stores
	// Where says where the stores are (the folder or the URL), for
	// messages.
	Where string
}

// Open opens the selected stores (see OpenStores). The caller closes them
// with Done.
func (a *App) Open() (*Opened, error) {
	st, where, err := a.OpenStores(context.Background())
	if err != nil {
		return nil, err
	}
	return &Opened{App: a, Stores: st, Where: where}, nil
}

// OpenTeam opens the selected stores and loads the team named by --team
// (teamName, as typed). On an error nothing is left open; otherwise the
// caller closes the stores with Done.
func (a *App) OpenTeam(ctx context.Context, teamName string) (*Opened, team.Config, error) {
	s, err := a.Open()
	if err != nil {
		return nil, team.Config{}, err
	}
	c, err := s.Team(ctx, "--team", teamName)
	if err != nil {
		_ = s.Release() // the lookup error is the one to report
		return nil, team.Config{}, err
	}
	return s, c, nil
}

// Release closes the stores.
func (s *Opened) Release() error {
	if s.Close == nil {
		return nil
	}
	return s.Close()
}

// Done closes the stores, folding a close error into *err; it is meant to
// be deferred.
func (s *Opened) Done(err *error) {
	if cerr := s.Release(); cerr != nil && *err == nil {
		*err = fmt.Errorf("close store: %w", cerr)
	}
}

// Team canonicalises a team name the user typed (flag names the flag or
// argument it came from) and loads the team. An unknown team is an error
// that lists the teams there are.
func (s *Opened) Team(ctx context.Context, flag, name string) (team.Config, error) {
	canon, err := team.CanonicalName(name)
	if err != nil {
		return team.Config{}, Usagef("%s: %w", flag, err)
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
		return team.Config{}, Describef(err, "%s: unknown team %q: there are no teams in %s (create one with 'troupe team create %s')", flag, canon, s.Where, canon)
	}
	names := make([]string, len(all))
	for i, t := range all {
		names[i] = t.Name
	}
	return team.Config{}, Describef(err, "%s: unknown team %q in %s; teams: %s", flag, canon, s.Where, strings.Join(names, ", "))
}

// Member checks that name is on c's roster; its error lists the members.
func Member(c team.Config, flag, name string) error {
	if name == "" {
		return Usagef("%s: empty name", flag)
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
	return Describef(team.ErrNoMember, "%s: team %s has no member %q%s; members: %s", flag, c.Name, name, hint, strings.Join(c.Names(), ", "))
}

// describedError gives a friendlier message to an error while keeping it
// matchable with errors.Is and errors.As.
type describedError struct {
	msg string
	err error
}

func (e *describedError) Error() string { return e.msg }
func (e *describedError) Unwrap() error { return e.err }

// Describef returns an error reading as the formatted message that still
// matches err with errors.Is and errors.As.
func Describef(err error, format string, args ...any) error {
	return &describedError{msg: fmt.Sprintf(format, args...), err: err}
}

// CheckColor refuses a --color that is not in the team palette.
func CheckColor(color string) error {
	if color != "" && !slices.Contains(team.Palette[:], color) {
		return Usagef("--color %q: want one of %s", color, strings.Join(team.Palette[:], ", "))
	}
	return nil
}
