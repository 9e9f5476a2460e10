// Package trustcmd is `troupe trust`: the folders whose own files
// (settings, .mcp.json, agent definitions) troupe honours in full, kept in
// the trust store of the troupe home (permission/settings, "Trust" in
// docs/permissions.md).
package trustcmd

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/permission/settings"
)

// app is the shared state of the command line, with this package's
// commands as its methods.
type app struct{ *cli.App }

// New returns the command, bound to the command line's shared state.
func New(c *cli.App) *cobra.Command { return (&app{c}).trustCommand() }

// Store returns the trust store of the command line's troupe home.
func Store(a *cli.App) (*settings.TrustStore, error) {
	home, err := a.Home()
	if err != nil {
		return nil, err
	}
	s := settings.Trust(home)
	if u, err := a.HomeDir(); err == nil {
		s.SetUserHome(u)
	}
	return s, nil
}

// Review lists what the folder's own files would make troupe do
// (settings.Inspect) and its agent definitions' permission modes wider
// than default; runs is the part the trust store fingerprints.
func Review(cwd string) (runs, lines []string) {
	p := settings.Inspect(cwd)
	lines = append(lines, p.Runs...)
	lines = append(lines, p.Widens...)
	agents, _ := brief.LoadAgents(brief.AgentDirs(cwd, "", ""))
	for _, ag := range agents {
		if ag.Source == brief.SourceProject && ag.PermissionMode != "" && ag.PermissionMode != "default" && ag.PermissionMode != "plan" {
			lines = append(lines, fmt.Sprintf("agent %s: permissionMode %s (%s)", ag.Name, ag.PermissionMode, ag.Path))
		}
	}
	return p.Runs, lines
}

// Entry is one folder in `troupe trust --list --json`, and the result of
// trusting or revoking.
type Entry struct {
	Dir       string    `json:"dir"`
	Trusted   bool      `json:"trusted"`
	TrustedAt time.Time `json:"trusted_at,omitzero"`
	Runs      []string  `json:"runs,omitempty"`
	Via       string    `json:"via,omitempty"`
}

func (a *app) trustCommand() *cobra.Command {
	var revoke, list bool
	c := &cobra.Command{
		Use:   "trust [--revoke] [DIR]",
		Short: "Trust a folder (default: here) so that its own settings, .mcp.json and agent definitions are honoured",
		Long: `trust records DIR (default: the current folder; links resolved) as trusted in
the trust store of the troupe home (--home, $TROUPE_HOME, ~/.troupe), with
the hook commands and MCP servers its files hold now. Its subfolders are
trusted with it.

Until a folder is trusted, troupe -p refuses to run in it and the interactive
lead asks first; teammates, workers and troupe mcp list honour only what
cannot run a program or widen permissions: no hooks, no MCP servers of the
project, no defaultMode wider than default, no additionalDirectories, no
allow rules, and agent definitions without their permissionMode. When a
trusted folder's hooks or MCP servers change, it is asked about again.

--revoke forgets a folder; --list shows the trusted folders. The user's own
settings file may also list folders under "trustedDirectories".`,
		Example: `  troupe trust
  troupe trust ~/src/app
  troupe trust --revoke ~/src/app
  troupe trust --list --json`,
		Args: cli.Positional("[DIR]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if list && (revoke || len(args) > 0) {
				return cli.Usagef("--list takes no folder and no --revoke")
			}
			store, err := Store(a.App)
			if err != nil {
				return err
			}
			if list {
				return a.list(store)
			}
			dir := ""
			if len(args) > 0 {
				dir = args[0]
			}
			if dir, err = a.WorkDir(dir); err != nil {
				var ue *cli.UsageError
				if errors.As(err, &ue) {
					return cli.Usagef("%s: not a folder", args[0])
				}
				return err
			}
			dir = settings.Canonical(dir)
			if revoke {
				if err := store.Revoke(cmd.Context(), dir); err != nil {
					return err
				}
				if a.JSON {
					return a.PrintJSON(Entry{Dir: dir})
				}
				fmt.Fprintf(a.Stdout, "Revoked trust in %s: its own settings, .mcp.json and agent definitions no longer run or widen anything.\n", termtext.Line(dir))
				return nil
			}
			runs, lines := Review(dir)
			if err := store.Trust(cmd.Context(), dir, runs); err != nil {
				return err
			}
			if a.JSON {
				return a.PrintJSON(Entry{Dir: dir, Trusted: true, TrustedAt: a.Now().UTC(), Runs: runs})
			}
			fmt.Fprintf(a.Stdout, "Trusted %s and its subfolders.\n", termtext.Line(dir))
			if len(lines) > 0 {
				fmt.Fprintln(a.Stdout, "Its files now:")
				for _, l := range lines {
					fmt.Fprintf(a.Stdout, "  %s\n", termtext.Line(l))
				}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&revoke, "revoke", false, "forget the folder's trust")
	c.Flags().BoolVar(&list, "list", false, "list the trusted folders")
	return c
}

func (a *app) list(store *settings.TrustStore) error {
	entries, err := store.Load()
	if err != nil {
		return err
	}
	out := []Entry{}
	for _, e := range entries {
		out = append(out, Entry{Dir: e.Dir, Trusted: true, TrustedAt: e.TrustedAt, Runs: e.Runs})
	}
	if a.JSON {
		return a.PrintJSON(out)
	}
	if len(out) == 0 {
		fmt.Fprintf(a.Stdout, "No trusted folders in %s. Trust one with: troupe trust DIR\n", store.Path)
		return nil
	}
	w := a.Table()
	cli.Row(w, "FOLDER", "TRUSTED", "RUNS")
	for _, e := range out {
		cli.Row(w, cli.Cell(e.Dir), cli.LocalTime(e.TrustedAt), fmt.Sprint(len(e.Runs)))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if _, err := os.Stat(store.UserSettings); err == nil {
		fmt.Fprintf(a.Stdout, "(%s may list more under %q)\n", store.UserSettings, settings.TrustKey)
	}
	return nil
}
