// Package agentscmd is `troupe agents`: the custom agent types an Agent call
// may name, where each is defined and what is wrong with those that do not
// load.
package agentscmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/session/kit"
)

func (a *app) loadAgentTypes(cwd string) ([]brief.Agent, error) {
	userHome, troupeHome := a.UserHomes()
	return brief.LoadAgents(kit.TrustAgentDirs(brief.AgentDirs(cwd, userHome, troupeHome), cwd, troupeHome))
}

// agentsCommand is `troupe agents`: the agent types of a folder with
// their source, tools and model; malformed definitions are listed after
// them with file and line, and make the command fail.
// app is the shared state of the command line, with this package's
// commands as its methods.
type app struct{ *cli.App }

// New returns the command, bound to the command line's shared state.
func New(c *cli.App) *cobra.Command { return (&app{c}).agentsCommand() }

func (a *app) agentsCommand() *cobra.Command {
	var cwd string
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "List the agent types (built-in, project, user) the Agent tool's subagent_type selects",
		Long: `troupe agents lists the agent types an agent working in --cwd (default the
current folder) can start: the built-ins (general-purpose, Explore, Plan) and
the definitions in .claude/agents and .troupe/agents of the project, then of
the user (~/.claude/agents, <home>/agents); a project definition wins over a
user one of the same name, and either over a built-in. Malformed files are
reported with file and line (the command then exits 1); the others still
load. With --json, one document.`,
		Args: cli.Positional(),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := a.WorkDir(cwd)
			if err != nil {
				return err
			}
			custom, loadErr := a.loadAgentTypes(dir)
			all := brief.WithBuiltins(custom)
			if a.JSON {
				type agentJSON struct {
					Name            string   `json:"name"`
					Source          string   `json:"source"`
					Path            string   `json:"path,omitempty"`
					Description     string   `json:"description"`
					Tools           []string `json:"tools,omitempty"`
					DisallowedTools []string `json:"disallowedTools,omitempty"`
					Model           string   `json:"model,omitempty"`
					Color           string   `json:"color,omitempty"`
					PermissionMode  string   `json:"permissionMode,omitempty"`
				}
				out := struct {
					Agents []agentJSON `json:"agents"`
					Errors []string    `json:"errors"`
				}{Errors: []string{}}
				for _, d := range all {
					out.Agents = append(out.Agents, agentJSON{d.Name, d.Source, d.Path, d.Description, d.Tools, d.DisallowedTools, d.Model, d.Color, d.PermissionMode})
				}
				out.Errors = errorLines(loadErr)
				if err := a.PrintJSON(out); err != nil {
					return err
				}
			} else {
				w := a.Table()
				cli.Row(w, "NAME", "SOURCE", "TOOLS", "MODEL", "PATH")
				for _, d := range all {
					tools := "all"
					if d.Tools != nil {
						tools = strings.Join(d.Tools, ",")
					}
					if len(d.DisallowedTools) > 0 {
						tools += " -" + strings.Join(d.DisallowedTools, ",-")
					}
					model := d.Model
					if model == "" {
						model = "inherit"
					}
					cli.Row(w, d.Name, d.Source, tools, model, d.Path)
				}
				if err := w.Flush(); err != nil {
					return err
				}
			}
			if loadErr != nil {
				for _, l := range errorLines(loadErr) {
					fmt.Fprintf(a.Stderr, "troupe agents: %s\n", l)
				}
				return &cli.ExitError{Code: 1, Msg: "malformed agent definitions"}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&cwd, "cwd", "", "the project `DIR` (default the current folder)")
	return cmd
}

// errorLines splits a joined error into its lines.
func errorLines(err error) []string {
	if err == nil {
		return []string{}
	}
	var j interface{ Unwrap() []error }
	if errors.As(err, &j) {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, e.Error())
		}
		return out
	}
	return []string{fmt.Sprint(err)}
}
