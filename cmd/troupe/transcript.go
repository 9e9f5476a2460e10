package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/transcript"
)

func (a *app) transcriptsFor(session string) *kit.Transcripts {
	home, err := a.home()
	if err != nil {
		return nil
	}
	return kit.NewTranscripts(home, session, a.Now, a.Stderr)
}

// transcriptCommand is `troupe transcript`.
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
		Args: positional("SESSION-ID|AGENT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := a.home()
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
			if !a.jsonOut && agent == "" && len(paths) > 1 {
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
	if a.jsonOut {
		for _, l := range t.Lines[from:] {
			if err := a.printJSON(l); err != nil {
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
