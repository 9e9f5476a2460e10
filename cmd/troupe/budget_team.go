package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/transcript"
)

// budgetTeam asks the lead's teammates to shut down because ee was
// reached (the meter's OnExceeded, after the person was told), and stops
// the session's remote jobs.
func (lr *leadRun) budgetTeam(ee *budget.ExceededError) {
	if lr.bg == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kit.StopRemoteJobs(ctx, lr.bg.reg)
	if lr.bg.team == nil {
		return
	}
	if _, err := lr.bg.team.Lead.BudgetSpent(ctx, ee.Error()); err != nil {
		lr.bg.sess.TeamEvent(swarm.Event{Time: time.Now(), Agent: "team-lead", Kind: swarm.EventWarning, Text: err.Error()})
	}
}

// budgetEnd is the end of a headless run whose session limit was reached
// (runErr, or the meter, says so): the teammates, asked to shut down, are
// waited for (kit.LeadTeam.AwaitBudgetShutdown); and a run
// that ended without the refusal (the lead had nothing more to do when a
// teammate's call reached the cap) still ends with the limit's error, so
// that it exits 6.
func (lr *leadRun) budgetEnd(h *headless, runErr error) error {
	meter := lr.out.Meter
	if meter == nil {
		return runErr
	}
	if lr.spentSync != nil {
		lr.spentSync() // budget_claude.go: what Claude Code teammates wrote last
	}
	spent := meter.Exceeded()
	if spent == nil {
		return runErr
	}
	if lr.bg != nil && lr.bg.team != nil {
		var ee *budget.ExceededError
		if errors.As(spent, &ee) {
			lr.budgetTeam(ee) // once: a no-op when OnExceeded asked already
		}
		if err := lr.bg.team.AwaitBudgetShutdown(context.Background(), h.teams.shut); err != nil {
			lr.bg.sess.TeamEvent(swarm.Event{Time: time.Now(), Agent: "team-lead", Kind: swarm.EventWarning,
				Text: fmt.Sprintf("teammates still running after the budget's shutdown requests: %v", err)})
		}
	}
	if lr.bg != nil {
		if lead := lr.bg.sess.Lead(); lead != nil {
			// The reason, delivered after the lead's last call was refused,
			// goes into its conversation for a resumed session.
			lead.Absorb()
		}
	}
	if runErr == nil {
		return spent
	}
	return runErr
}

// watchLedger makes the lead's meter look at the session's ledger each
// time it changes (kit.WatchLedger); the returned function stops it.
func (a *app) watchLedger(meter *budget.Meter, session string) func() {
	home, err := a.Home()
	if err != nil || session == "" {
		return func() {}
	}
	return kit.WatchLedger(transcript.Dir(home, session), meter)
}
