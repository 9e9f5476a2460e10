package main

import (
	"path/filepath"

	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/session/kit"
)

// followClaudeMates starts following the transcripts of the lead's Claude
// Code teammates into meter (kit.ClaudeMates), when pane teammates run a
// teammate command; it sets lr.spentSync to a final read and returns the
// stop of the watch.
func (a *app) followClaudeMates(h *headless, cwd string, lr *leadRun, meter *budget.Meter) func() {
	home, err := a.Home()
	if err != nil || teammateCommand(a, h) == "" {
		return func() {}
	}
	read, stop := kit.ClaudeMates{Projects: filepath.Join(home, "projects"), Cwd: cwd, Meter: meter, Warn: a.WarnOnce,
		Led: func() []string {
			if lr.bg == nil || lr.bg.team == nil {
				return nil
			}
			return lr.bg.team.Lead.Led()
		}}.Follow()
	lr.spentSync = read
	return stop
}
