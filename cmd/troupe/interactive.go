package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/troupe-dev/troupe/cli"

	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/session"
	"github.com/troupe-dev/troupe/session/record"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/transcript"
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
// in the working folder, and shuts its team down when the person quits;
// a session picked with /resume is opened next.
func (a *app) runInteractive(ctx context.Context, h *headless) error {
	return a.runInteractivePrompt(ctx, h, "")
}

// runInteractivePrompt is runInteractive with a first prompt submitted
// at the start (troupe demo --ui).
func (a *app) runInteractivePrompt(ctx context.Context, h *headless, prompt string) error {
	if !isTerminal(a.Stdin) || !isTerminal(a.Stdout) {
		return cli.Usagef("the interactive lead needs a terminal (stdin and stdout); to run without one: troupe -p \"your prompt\"")
	}
	cwd, err := a.WorkDir(h.cwd)
	if err != nil {
		return err
	}
	if err := a.trustGate(ctx, h, cwd, true); err != nil { // trust.go: the trust question comes first
		return err
	}
	for {
		next, err := a.interactiveSession(ctx, h, cwd, prompt)
		if err == nil && ctx.Err() != nil {
			return context.Cause(ctx) // a signal: main says so and exits 130 or 143
		}
		if err != nil || next == "" {
			return err
		}
		h.session, prompt = sessionFlags{resume: next}, ""
	}
}

// interactiveSession runs one session of the interactive lead and returns
// the session to open next ("" to stop).
func (a *app) interactiveSession(ctx context.Context, h *headless, cwd, prompt string) (string, error) {
	lr, err := a.openLead(ctx, h, cwd, true)
	if lr != nil {
		defer lr.close()
	}
	if err != nil {
		return "", err
	}
	noAlt := h.noAltScreen
	if home, err := a.Home(); err == nil && !noAlt {
		if noAlt, err = settingsNoAltScreen(settings.Files(home, cwd)); err != nil {
			return "", err
		}
	}
	sess := lr.bg.sess
	sctx, stopServe := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() { defer close(served); sess.Serve(sctx) }()
	go a.recordSwaps(sctx, lr)
	userHome, troupeHome := a.UserHomes()
	cmds, _ := brief.LoadCommands(brief.CommandDirs(cwd, userHome, troupeHome))
	names := map[string]string{"hooks": "the hooks in force; adopt hooks changed in the settings files"}
	for n, c := range cmds {
		names[n] = c.Description
	}
	names["dream"] = "consolidate the project's memory now, in the background (dream.go)"
	lr.hooks.SessionStart(ctx, len(lr.history) > 0, sess.Lead().Send)                                            // hooks.go
	names["mcp"] = "the MCP servers: their state and tools"                                                      // mcp.go
	names["rename"] = "rename this session: the name other sessions address it by (troupe sessions, ListAgents)" // peers.go
	var board func(context.Context) (string, []tasklist.Task, error)
	if lt := lr.bg.team; lt != nil { // agent teams on: the task board reads the team's list
		board = tui.BoardOf(lt.Raw.Tasks, lt.Lead.Team)
	}
	out, runErr := tui.Run(ctx, sess, tui.Options{
		Title: fmt.Sprintf("troupe · %s · session %s", lr.model, lr.id), Model: lr.model, Mode: lr.mode, Dir: cwd, Teams: lr.bg.team != nil,
		NoColor: a.Getenv("NO_COLOR") != "", NoAltScreen: noAlt, Commands: names, Tasks: lr.bg.reg.List(),
		Input: a.Stdin, Output: a.Stdout, Now: a.Now, History: lr.history, Prompt: prompt,
		Schedule:    lr.scheduleState(), // schedule.go: the footer's next wake
		Sessions:    func() []tui.SessionInfo { return a.recentSessions(cwd, lr.id) },
		CheckResume: func(id string) error { return a.checkResume(cwd, id) },
		Transcript: func(name string, from int64) ([]transcript.Line, int64, error) { // what a teammate wrote and did
			return transcript.Tail(filepath.Join(transcript.Dir(troupeHome, lr.id), transcript.FileName(name)), from)
		},
		Spent: tuiSpent(lr.out.Meter), // budget.go: the session's spending in the footer
		Board: board,
		Slash: func(ctx context.Context, name, args string) (string, string, error) {
			switch name {
			case "dream": // dream.go
				return "", a.slashDream(h, cwd, lr.id, lr.bg.reg), nil
			case "mcp": // mcp.go
				return "", a.mcpReport(), nil
			case "rename": // peers.go
				return "", slashRename(ctx, lr, args), nil
			case "hooks": // hooks.go: list them; adopt changed settings once seen
				note, err := lr.hooks.Review()
				return "", note, err
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
	lr.hooks.SessionEnd(ctx, "prompt_input_exit")
	if !h.noResumeHint {
		fmt.Fprintf(a.Stderr, "troupe: ending the session; resume it with: troupe --resume %s\n", lr.id)
	}
	lr.bg.endTeam(h.teams.keep)
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return "", runErr
	}
	return out.Resume, nil
}

// recentSessions lists the 20 latest sessions recorded in cwd but the
// current one, with their first prompts, for /resume.
func (a *app) recentSessions(cwd, current string) []tui.SessionInfo {
	home, err := a.Home()
	if err != nil {
		return nil
	}
	dir := filepath.Join(home, "sessions")
	var out []tui.SessionInfo
	for _, si := range record.List(dir, cwd) {
		if si.ID == current {
			continue
		}
		info := tui.SessionInfo{ID: si.ID, When: si.Mod}
		if rs, err := record.Load(record.Path(dir, si.ID)); err == nil {
			for _, m := range rs.Messages {
				if t := strings.TrimSpace(m.Text()); m.Role == llm.RoleUser && t != "" {
					info.Prompt = t
					break
				}
			}
		}
		if out = append(out, info); len(out) == 20 {
			break
		}
	}
	return out
}

// checkResume tells whether the session id picked with /resume can be
// opened in cwd, before this one ends for it: its record reads (what
// openSessions asks of it).
func (a *app) checkResume(cwd, id string) error {
	home, err := a.Home()
	if err != nil {
		return err
	}
	_, err = record.Resume(filepath.Join(home, "sessions"), id, cwd)
	return err
}

// recordSwaps writes the foreground lead's whole conversation to the
// session's record when it changes hands (a turn backgrounded or brought
// back, a fresh conversation after /clear), so that --resume continues
// the conversation on screen.
func (a *app) recordSwaps(ctx context.Context, lr *leadRun) {
	sub := lr.bg.sess.Subscribe(true)
	defer sub.Close()
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			return
		}
		if e.Kind == session.KindBackgrounded || e.Kind == session.KindForegrounded || e.Kind == session.KindCleared {
			lr.rec.Reset(lr.bg.sess.Lead().Messages())
		}
	}
}
