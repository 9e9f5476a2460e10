package teamcmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/team"
)

// Hidden is the JSON answer of team hide and team unhide.
type Hidden struct {
	Team   string   `json:"team"`
	Member string   `json:"member"`
	Pane   string   `json:"pane"`
	Hidden []string `json:"hiddenPaneIds"`
}

// teamHideCommand is `team hide` (hide true) or `team unhide` (named so
// beside `team show`, which shows a team): it edits the
// team file's hiddenPaneIds, which the running lead follows by taking the
// member's pane out of its window or bringing it back (swarm, lead_panes.go).
func (a *app) teamHideCommand(hide bool) *cobra.Command {
	use, short := "unhide TEAM MEMBER", "Bring a hidden teammate's pane back into the lead's window"
	if hide {
		use, short = "hide TEAM MEMBER", "Take a teammate's pane out of the lead's window; it goes on working, hidden"
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + `.

The team file's hiddenPaneIds records the hidden panes, as Claude Code's lead
does; the lead running the team follows the change at once. Only a teammate in
a tmux pane can be hidden.`,
		Args: cli.Positional("TEAM", "MEMBER"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			ctx := cmd.Context()
			s, c, err := a.openMember(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			defer s.Done(&err)
			m, _ := c.Member(args[1])
			pane := m.TmuxPaneID
			if m.BackendType != team.BackendTmux || !strings.HasPrefix(pane, "%") {
				return cli.Usagef("%s runs %s (pane %q): only a teammate in a tmux pane can be hidden or shown", m.Name, orWord(m.BackendType, "nowhere yet"), pane)
			}
			c, err = s.Teams.Update(ctx, c.Name, func(c *team.Config) error {
				ids := slices.DeleteFunc(slices.Clone(c.HiddenPaneIDs), func(id string) bool { return id == pane })
				if hide {
					ids = append(ids, pane)
				}
				c.HiddenPaneIDs = ids
				return nil
			})
			if err != nil {
				return err
			}
			if a.JSON {
				return a.PrintJSON(Hidden{Team: c.Name, Member: m.Name, Pane: pane, Hidden: c.HiddenPaneIDs})
			}
			verb := "shown"
			if hide {
				verb = "hidden"
			}
			_, err = fmt.Fprintf(a.Stdout, "%s (pane %s) of team %s is %s; the lead follows the team file\n", m.Name, pane, c.Name, verb)
			return err
		},
	}
}

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
