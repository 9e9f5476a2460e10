// Package contextcmd is `troupe context`: what an agent working in a folder
// is told besides its task (instruction files and the environment block).
package contextcmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/session/kit"
)

// contextCommand is `troupe context`: what an agent working in a folder
// would be told besides its task.
// app is the shared state of the command line, with this package's
// commands as its methods.
type app struct{ *cli.App }

// New returns the command, bound to the command line's shared state.
func New(c *cli.App) *cobra.Command { return (&app{c}).contextCommand() }

func (a *app) contextCommand() *cobra.Command {
	var cwd string
	var noInstr bool
	cmd := &cobra.Command{
		Use:   "context",
		Short: "Show what an agent in a folder is told: project instructions (CLAUDE.md, AGENTS.md) and the environment",
		Long: `troupe context lists the instruction files an agent working in --cwd (default
the current folder) would be given, in the order it sees them, with their
sizes and anything cut or refused, and prints the environment block. With
--json, one document with the files and the environment.`,
		Args: cli.Positional(),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := a.WorkDir(cwd)
			if err != nil {
				return err
			}
			// What the lead is told besides hooks and MCP servers, which only
			// add tools: the same kit.Run as the lead's.
			user, home := a.UserHomes()
			run := kit.Run{UserHome: user, TroupeHome: home, Now: a.Now, Getenv: a.Getenv, Warn: a.WarnOnce}
			ac := run.NewContext(dir, "", noInstr, nil)
			env := ac.Environment(cmd.Context())
			var files []brief.Source
			if in := ac.Instructions(); in != nil {
				files = in.Sources
			}
			if a.JSON {
				type file struct {
					Path       string `json:"path"`
					Scope      string `json:"scope"`
					ImportedBy string `json:"importedBy,omitempty"`
					Size       int    `json:"size"`
					Shown      int    `json:"shown"`
					Cut        bool   `json:"cut,omitempty"`
					Note       string `json:"note,omitempty"`
				}
				out := struct {
					Cwd         string `json:"cwd"`
					Files       []file `json:"files"`
					Environment string `json:"environment"`
				}{Cwd: dir, Files: []file{}, Environment: env}
				for _, s := range files {
					out.Files = append(out.Files, file{s.Path, s.Scope, s.ImportedBy, s.Size, len(s.Content), s.Cut, s.Note})
				}
				return a.PrintJSON(out)
			}
			w := a.Stdout
			fmt.Fprintf(w, "An agent in %s is told:\n\n", dir)
			switch {
			case noInstr:
				fmt.Fprintln(w, "project instructions: off (--no-project-instructions)")
			case len(files) == 0:
				fmt.Fprintln(w, "project instructions: none found (CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md, AGENTS.md here and above; ~/.claude/CLAUDE.md; AGENTS.md in the troupe home)")
			default:
				fmt.Fprintln(w, "project instructions, in the order the agent sees them:")
				total := 0
				for _, s := range files {
					switch {
					case s.Note != "":
						fmt.Fprintf(w, "  %-8s %s: %s\n", s.Scope, termtext.Line(s.Path), s.Note)
					case s.Cut:
						fmt.Fprintf(w, "  %-8s %s  %s, cut to %s\n", s.Scope, termtext.Line(s.Path), byteSize(s.Size), byteSize(len(s.Content)))
					default:
						fmt.Fprintf(w, "  %-8s %s  %s\n", s.Scope, termtext.Line(s.Path), byteSize(s.Size))
					}
					total += len(s.Content)
				}
				fmt.Fprintf(w, "  in all %s (limits: %s a file, %s in all); a subfolder's files come when the agent first reads or edits a file there\n",
					byteSize(total), byteSize(brief.DefaultMaxFileBytes), byteSize(brief.DefaultMaxTotalBytes))
			}
			fmt.Fprintf(w, "\nenvironment (read again at each run):\n%s\n", env)
			return nil
		},
	}
	cmd.Flags().StringVar(&cwd, "cwd", "", "the agent's working `DIR` (default: the current folder)")
	cmd.Flags().BoolVar(&noInstr, "no-project-instructions", false, "as the flag of troupe -p: leave the instruction files out")
	return cmd
}

// byteSize writes n bytes for a person.
func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
