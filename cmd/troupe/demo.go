package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/cli/agentflags"
	"github.com/troupe-dev/troupe/cli/mate"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/session/demo"
)

// demoCommand is `troupe demo`: an offline agent team on a scripted model.
func (a *app) demoCommand() *cobra.Command {
	var mode string
	var keep, slow, ui bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run an offline agent team: a lead and three teammates add a function to a small Go project",
		Long: `troupe demo runs a whole agent team offline, on a scripted model (no API key,
no network): in a fresh temporary git repository holding a small Go project, a
lead creates a team, three tasks with a dependency and three teammates; the
teammates claim the tasks, edit the files, run go build and go test (asking the
lead for permission, which the demo grants), message each other and the lead,
then shut down, and the lead deletes the team. It prints a timestamped timeline
and a summary, checks the result, and leaves no process or pane behind.`,
		Args: cli.Positional(),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch mode {
			case backend.ModeInProcess, backend.ModeTmux, backend.ModeITerm2, backend.ModeAuto:
			default:
				return cli.Usagef("--teammate-mode %q: want in-process, tmux, iterm2 or auto", mode)
			}
			if ui && (!isTerminal(a.Stdin) || !isTerminal(a.Stdout)) {
				return cli.Usagef("--ui needs a terminal (stdin and stdout); without --ui the demo prints its timeline")
			}
			return a.runDemo(cmd.Context(), mode, keep, slow || ui, ui)
		},
	}
	cmd.Flags().StringVar(&mode, "teammate-mode", backend.ModeInProcess, "where the teammates run: in-process, tmux (panes of a private tmux server, or of this window inside tmux), iterm2 or auto")
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the temporary project and store (their folder is printed)")
	cmd.Flags().BoolVar(&ui, "ui", false, "run the demo in the interactive lead, at --slow speed: watch the team work, look into teammates and tasks (no key needed; Ctrl+C twice leaves)")
	cmd.Flags().BoolVar(&slow, "slow", false, fmt.Sprintf("every model reply takes %s, so that a person can follow the team (with --teammate-mode tmux, attach with the command printed at the start)", demo.SlowReply))
	return cmd
}

func (a *app) runDemo(ctx context.Context, mode string, keep, slow, ui bool) error {
	start := a.Now()
	dir, err := os.MkdirTemp("", "troupe-demo-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintf(a.Stdout, "demo folder: %s (kept)\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	project, home := filepath.Join(dir, "calc"), filepath.Join(dir, "home")
	script := filepath.Join(dir, "script.json")
	if err := demo.Write(project, script, slow); err != nil {
		return err
	}
	out := a.Stdout
	fmt.Fprintf(out, "troupe demo: a lead and three teammates on a scripted model, teammates %s\nproject: %s\n\n", mode, project)
	if err := demo.GitInit(ctx, project); err != nil {
		fmt.Fprintf(out, "(no git repository: %v)\n", err)
	}
	stats, approver := &demo.Stats{}, &demo.Approver{}
	a.HomeFlag = home
	// The demo's project is its own, written just now: trusted in the
	// demo's home, where its pane teammates look too (trust.go).
	if err := settings.Trust(home).Trust(ctx, project, settings.Inspect(project).Runs); err != nil {
		return err
	}
	mate := &mate.Flags{TeammateMode: mode}
	h := &headless{print: true, outputFormat: "text", model: agentflags.Model{Provider: "scripted", Script: script}, maxTurns: 50, cwd: project,
		perm: agentflags.Permissions{Mode: "acceptEdits", PromptTimeout: time.Minute},
		// The demo's script (session/demo/script.json) forms its team with
		// TeamCreate: the seeds' explicit flow.
		teams: teamFlags{enabled: true, explicit: true, digest: digestQuiet, mate: mate, answer: approver.Answer, timeline: out, onEvent: stats.Add}}
	var result bytes.Buffer
	var runErr error
	if ui {
		h.print, h.noResumeHint = false, true
		runErr = a.runInteractivePrompt(ctx, h, demo.Prompt)
		result.WriteString("(shown in the interactive lead)")
	} else {
		saved := a.Stdout
		a.Stdout = &result // the lead's final answer, printed in the summary
		runErr = a.runHeadless(ctx, h, demo.Prompt)
		a.Stdout = saved
	}
	elapsed := a.Now().Sub(start)
	if ctx.Err() != nil {
		// The run stopped its teammates and removed the team on its way
		// out; the folder goes with the deferred removal.
		fmt.Fprintf(out, "\ninterrupted after %s: the teammates were stopped and the team removed\n", elapsed.Round(10*time.Millisecond))
		return &ExitError{Code: 130}
	}

	deleted := stats.Deleted()
	if ui && !deleted && runErr == nil {
		fmt.Fprintf(out, "\nyou left the demo after %s, before the team finished; its teammates were stopped and the team removed\n", elapsed.Round(10*time.Millisecond))
		return nil
	}
	var problems []string
	if runErr != nil {
		problems = append(problems, "the lead's run failed: "+runErr.Error())
	}
	var teams demo.Teams
	if sess, err := a.Open(); err != nil {
		problems = append(problems, err.Error())
	} else {
		defer sess.Release()
		teams = sess.Teams
	}
	problems = append(problems, demo.Check(ctx, project, deleted, teams)...)
	return stats.Summary(out, demo.Outcome{Elapsed: elapsed, Mode: mode, Granted: approver.Granted(),
		Answer: strings.TrimSpace(result.String()), Problems: problems})
}
