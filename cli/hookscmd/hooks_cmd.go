// Package hookscmd is `troupe hooks`: the hooks the settings files configure
// for an agent in a folder.
package hookscmd

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/hooks"
	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/session/kit"
)

// hooksCommand is `troupe hooks`.
// app is the shared state of the command line, with this package's
// commands as its methods.
type app struct{ *cli.App }

// New returns the command, bound to the command line's shared state.
func New(c *cli.App) *cobra.Command { return (&app{c}).hooksCommand() }

func (a *app) hooksCommand() *cobra.Command {
	return cli.Group("hooks", "Inspect the hooks of the settings files", a.hooksListCommand())
}

// Line is one hook in `troupe hooks list --json`.
type Line struct {
	Event    hooks.Event `json:"event"`
	Matcher  string      `json:"matcher"`
	Command  string      `json:"command"`
	TimeoutS float64     `json:"timeout_s"`
	Source   string      `json:"source"`
}

func (a *app) hooksListCommand() *cobra.Command {
	var cwd string
	c := &cobra.Command{
		Use:   "list",
		Short: "Show the hooks in force, with their event, matcher, timeout and file",
		Long: `list shows the command hooks a run started in --cwd (default: here)
would use, in the order they run, read from the same settings files as
permissions: $TROUPE_HOME/settings.json (or --home),
<cwd>/.claude/settings.json, <cwd>/.troupe/settings.json,
<cwd>/.claude/settings.local.json, <cwd>/.troupe/settings.local.json.
A malformed hooks block is an error naming the file and the key; what is
skipped (an unknown event, a hook type other than command) is a warning.`,
		Example: `  troupe hooks list
  troupe hooks list --cwd ../service --json`,
		Args: cli.Positional(),
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := a.Home()
			if err != nil {
				return err
			}
			if cwd, err = a.WorkDir(cwd); err != nil {
				return err
			}
			c, err := hooks.Load(kit.SettingsPaths(home, cwd))
			if err != nil {
				return err
			}
			for _, w := range append(c.Warnings, kit.UntrustedHooks(home, cwd)...) {
				fmt.Fprintf(a.Stderr, "troupe: warning: %s\n", termtext.Line(w))
			}
			lines := []Line{}
			for _, ev := range hooks.Events {
				for _, h := range c.Hooks {
					if h.Event == ev {
						lines = append(lines, Line{Event: h.Event, Matcher: h.Matcher, Command: h.Command, TimeoutS: h.Timeout.Seconds(), Source: h.Source})
					}
				}
			}
			if a.JSON {
				enc := json.NewEncoder(a.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(lines)
			}
			if len(lines) == 0 {
				fmt.Fprintln(a.Stdout, "no hooks")
				return nil
			}
			tw := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "EVENT\tMATCHER\tTIMEOUT\tCOMMAND\tSOURCE")
			for _, l := range lines {
				m := l.Matcher
				if m == "" {
					m = "*"
				}
				fmt.Fprintf(tw, "%s\t%s\t%gs\t%s\t%s\n", l.Event, termtext.Line(m), l.TimeoutS, termtext.Line(l.Command), l.Source)
			}
			return tw.Flush()
		},
	}
	c.Flags().StringVar(&cwd, "cwd", "", "the project `DIR` whose settings to read (default: the current folder)")
	return c
}
