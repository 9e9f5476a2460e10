package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/session"
	"github.com/troupe-dev/troupe/tui"
)

// isTerminal reports whether f is an *os.File on a terminal.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok {
		return false
	}
	fi, err := file.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// runInteractive opens the interactive lead (package tui) on a session
// in the working folder, and shuts its team down when the person quits.
func (a *app) runInteractive(ctx context.Context, h *headless) error {
	if !isTerminal(a.Stdin) || !isTerminal(a.Stdout) {
		return usagef("the interactive lead needs a terminal (stdin and stdout); to run without one: troupe -p \"your prompt\"")
	}
	cwd, err := a.workDir(h.cwd)
	if err != nil {
		return err
	}
	lr, err := a.openLead(ctx, h, cwd, true)
	if lr != nil {
		defer lr.close()
	}
	if err != nil {
		return err
	}
	sess := lr.bg.sess
	sctx, stopServe := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() { defer close(served); sess.Serve(sctx) }()
	go a.recordSwaps(sctx, lr)
	userHome, troupeHome := a.userHomes()
	cmds, _ := brief.LoadCommands(brief.CommandDirs(cwd, userHome, troupeHome))
	names := map[string]string{}
	for n, c := range cmds {
		names[n] = c.Description
	}
	runErr := tui.Run(ctx, sess, tui.Options{
		Title: fmt.Sprintf("troupe · %s · session %s", lr.model, lr.id), Mode: lr.mode,
		NoColor: a.Getenv("NO_COLOR") != "", Commands: names, Tasks: lr.bg.reg.List(),
		Input: a.Stdin, Output: a.Stdout, Now: a.Now,
		Slash: func(ctx context.Context, name, args string) (string, string, error) {
			if name == "model" {
				return "", "Model: " + lr.model + " (start troupe with --model to change it)", nil
			}
			prompt, err := a.expandCommand(h, cwd, strings.TrimSpace("/"+name+" "+args))
			return prompt, "", err
		},
	})
	// Quit: the lead stops, then the team is asked to shut down (and its
	// teammates killed after the timeout), so nothing is left running.
	sess.Interrupt()
	stopServe()
	<-served
	fmt.Fprintf(a.Stderr, "troupe: ending the session; resume it with: troupe --resume %s\n", lr.id)
	lr.bg.endTeam(h.teams.keep)
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return runErr
	}
	return nil
}

// recordSwaps writes the foreground lead's whole conversation to the
// session's record when it changes hands (a turn backgrounded or brought
// back), so that --resume continues the conversation on screen.
func (a *app) recordSwaps(ctx context.Context, lr *leadRun) {
	sub := lr.bg.sess.Subscribe(true)
	defer sub.Close()
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			return
		}
		if e.Kind == session.KindBackgrounded || e.Kind == session.KindForegrounded {
			lr.rec.reset(lr.bg.sess.Lead().Messages())
		}
	}
}
