package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/budget/claudelog"
	"github.com/troupe-dev/troupe/internal/dirwatch"
	"github.com/troupe-dev/troupe/internal/termtext"
)

// Claude Code teammates (--teammate-command claude) spend through their
// own process; the only record of it is their session transcripts, in
// <home>/projects/<project>/<session>.jsonl (the lead gives them the troupe
// home as CLAUDE_CONFIG_DIR). The lead follows those transcripts and
// charges each call of a member of its team to the session (ledger,
// limits) under the teammate's name: as they are written, for transcripts
// of the lead's folder (watched), and at the end of the run for all of
// them (teammates in worktrees of their own write elsewhere).

// claudeProject is the folder Claude Code keeps the transcripts of a
// session in cwd under: cwd with every character but letters and digits
// turned into "-".
func claudeProject(cwd string) string {
	b := []byte(cwd)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// followClaudeMates starts following the transcripts of the lead's Claude
// Code teammates into meter, when pane teammates run a teammate command;
// it sets lr.spentSync to a final read and returns the stop of the watch.
func (a *app) followClaudeMates(h *headless, cwd string, lr *leadRun, meter *budget.Meter) func() {
	home, err := a.home()
	if err != nil || teammateCommand(a, h) == "" {
		return func() {}
	}
	projects := filepath.Join(home, "projects")
	f := claudelog.NewFollower(projects)
	var mu sync.Mutex // one read at a time: calls are charged in order, once
	read := func() {
		mu.Lock()
		defer mu.Unlock()
		calls, err := f.Next()
		if err != nil {
			a.warnOnce(fmt.Sprintf("a Claude Code teammate's transcript: %s", termtext.Clean(err.Error())))
		}
		var led []string // the lead's teams, deleted ones too
		if lr.bg != nil && lr.bg.team != nil {
			led = lr.bg.team.Lead.Led()
		}
		for _, c := range calls {
			if c.Agent == "" || !slices.Contains(led, c.Team) {
				continue // not a teammate of one of this lead's teams
			}
			_ = meter.Add(c.Agent, c.Model, c.Usage) // a limit reached calls the meter's OnExceeded
		}
	}
	lr.spentSync = read
	dir := filepath.Join(projects, claudeProject(cwd))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return func() {}
	}
	w, err := dirwatch.New(dirwatch.Options{})
	if err != nil {
		return func() {}
	}
	kick, unsubscribe, err := w.Subscribe(dir, func(string) bool { return true })
	if err != nil {
		w.Close()
		return func() {}
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-kick:
				read()
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		unsubscribe()
		w.Close()
	}
}
