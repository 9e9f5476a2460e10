package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/session/kit"
)

// kitRun is what every agent of this run shares, for session/kit.
func (a *app) kitRun() kit.Run {
	user, home := a.UserHomes()
	return kit.Run{UserHome: user, TroupeHome: home, Hooks: a.hooks, MCP: a.mcp.tools, Now: a.Now, Getenv: a.Getenv, Warn: a.WarnOnce}
}

// newAgentContext loads what an agent in cwd is told (kit.Run.NewContext).
func (a *app) newAgentContext(cwd, model string, off bool, appr *approve.Approver) *kit.Context {
	return a.kitRun().NewContext(cwd, model, off, appr)
}

// expandCommand turns a prompt that calls a custom slash command ("/name
// args", from .claude/commands or .troupe/commands in the project or the
// user's home) into the command's prompt; its model is used when --model
// is not given. A prompt not shaped like a command is returned as is; an
// unknown command is an error listing the known ones.
func (a *app) expandCommand(h *headless, cwd, prompt string) (string, error) {
	name, args, ok := brief.SplitCommand(prompt)
	if !ok {
		return prompt, nil
	}
	userHome, troupeHome := a.UserHomes()
	cmds, err := brief.LoadCommands(brief.CommandDirs(cwd, userHome, troupeHome))
	if err != nil {
		a.WarnOnce(err.Error())
	}
	c, found := cmds[name]
	if !found {
		names := slices.Sorted(maps.Keys(cmds))
		if len(names) == 0 {
			return "", cli.Usagef("/%s: no such command (custom commands are .md files in .claude/commands or .troupe/commands, here or in your home; there are none)", name)
		}
		return "", cli.Usagef("/%s: no such command; the commands here are /%s", name, strings.Join(names, ", /"))
	}
	if c.Model != "" && h.model == "" {
		h.model = c.Model
	}
	return c.Expand(args), nil
}

// contextCommand is `troupe context`: what an agent working in a folder
// would be told besides its task.
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
			ac := a.newAgentContext(dir, "", noInstr, nil)
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
