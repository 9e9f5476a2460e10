// Package transcriptcmd is `troupe transcript`: what an agent of a session
// did, readably or as stored, and as it goes on.
package transcriptcmd

import (
	"fmt"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/transcript"
)

// transcriptCommand is `troupe transcript`.
// app is the shared state of the command line, with this package's
// commands as its methods.
type app struct{ *cli.App }

// New returns the command, bound to the command line's shared state.
func New(c *cli.App) *cobra.Command { return (&app{c}).transcriptCommand() }

func (a *app) transcriptCommand() *cobra.Command {
	var agent string
	var follow bool
	cmd := &cobra.Command{
		Use:   "transcript SESSION-ID|AGENT",
		Short: "Print what an agent did: the transcript of a session's lead, teammate, sub-agent or worker",
		Long: `troupe transcript prints an agent's transcript from <home>/sessions: with a
session id, the lead's (and the names of the others, for --agent); with an
agent's name, that agent's in the newest session that has one. --json prints
the lines as they are stored; --follow keeps printing as the agent works.`,
		Args: cli.Positional("SESSION-ID|AGENT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := a.Home()
			if err != nil {
				return err
			}
			paths, err := transcript.Find(home, args[0])
			if err != nil {
				return err
			}
			path := paths[0]
			if agent != "" {
				if path, err = transcript.OfAgent(paths, agent); err != nil {
					return fmt.Errorf("session %s has no transcript of %q", termtext.Line(args[0]), termtext.Line(agent))
				}
			}
			t, err := transcript.Read(path)
			if err != nil {
				return err
			}
			if err := a.printTranscript(t, 0, true); err != nil {
				return err
			}
			if !a.JSON && agent == "" && len(paths) > 1 {
				fmt.Fprintf(a.Stdout, "(%d other agent(s) in this session; pick one with --agent:", len(paths)-1)
				for _, name := range transcript.Agents(paths[1:]) {
					fmt.Fprintf(a.Stdout, " %s", termtext.Line(name))
				}
				fmt.Fprintln(a.Stdout, ")")
			}
			if follow {
				return transcript.Follow(cmd.Context(), path, t.Size, func(lines []transcript.Line) error {
					return a.printTranscript(transcript.Transcript{Lines: lines}, 0, false)
				})
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "", "the `NAME` of the agent of the session to print")
	cmd.Flags().BoolVar(&follow, "follow", false, "keep printing lines as they are appended, until interrupted")
	return cmd
}

// printTranscript prints t's lines from the from-th on, after its
// heading when heading is set.
func (a *app) printTranscript(t transcript.Transcript, from int, heading bool) error {
	if a.JSON {
		for _, l := range t.Lines[from:] {
			if err := a.PrintJSON(l); err != nil {
				return err
			}
		}
		return nil
	}
	if !heading {
		return transcript.RenderLines(a.Stdout, t.Lines[from:], termtext.Clean)
	}
	return transcript.Render(a.Stdout, t, termtext.Clean)
}
