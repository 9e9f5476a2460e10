package main

import (
	"io"

	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/cli/agentflags"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/transcript"
	"github.com/troupe-dev/troupe/tui"
)

// meterLead meters the lead's model for the session lr: the flags'
// limits, the settings' prices, and the session's ledger beside its
// transcripts. Every agent built on the returned model spends from the
// session's meter; a teammate's own name and limit come from
// teammateModel. The person is told once when a limit is reached.
func (a *app) meterLead(h *headless, cwd string, lr *leadRun, model llm.Model) (llm.Model, error) {
	var notice io.Writer // the interactive lead's screen is the TUI's: it shows the run's error
	if h.print {
		notice = a.Stderr
	}
	meter, err := a.newMeter(cwd, lr.id, h.budget.Limits(), func(e *budget.ExceededError) {
		lr.out.BudgetExceeded(e, notice)
		lr.budgetTeam(e) // budget_team.go: teammates are asked to shut down
	}, true)
	if err != nil {
		return nil, err
	}
	if err := agentflags.CheckPriced(meter.Prices(), meter.Limits(), model.Info().Model); err != nil {
		return nil, err
	}
	lr.out.Meter = meter
	if h.budget.Limits() != (budget.Limits{}) {
		lr.defer_(a.watchLedger(meter, lr.id)) // budget_team.go: pane teammates' spending seen as it is written
	}
	lr.defer_(a.followClaudeMates(h, cwd, lr, meter)) // budget_claude.go: Claude Code teammates' spending
	return meter.Account(transcript.KindLead, budget.Limits{}).Model(model), nil
}

// meterPane meters a pane teammate's model in its own process: its
// --max-budget-usd is the lead's cap for it, and its calls go to the
// ledger of the lead's session.
func (a *app) meterPane(h *headless, cwd, session, name string, model llm.Model) (llm.Model, error) {
	meter, err := a.newMeter(cwd, session, h.budget.Limits(), nil, false)
	if err != nil {
		return nil, err
	}
	if err := agentflags.CheckPriced(meter.Prices(), meter.Limits(), model.Info().Model); err != nil {
		return nil, err
	}
	return meter.Account(name, budget.Limits{}).Model(model), nil
}

// newMeter returns a session's meter recording into its ledger; with
// follow, the spending other processes of the session (pane teammates)
// append to the ledger counts toward limits too, brought in before every
// check.
func (a *app) newMeter(cwd, session string, limits budget.Limits, exceeded func(*budget.ExceededError), follow bool) (*budget.Meter, error) {
	home, err := a.Home()
	if err != nil {
		return nil, err
	}
	prices, err := agentflags.Prices(home, cwd)
	if err != nil {
		return nil, err
	}
	// Every call counts in the metrics (telemetry.go), read when it is made.
	cfg := budget.Config{Prices: prices, Limits: limits, OnExceeded: exceeded, Record: func(r budget.Record) { a.tel.spent(r) }}
	dir := ""
	if session != "" {
		dir = transcript.Dir(home, session)
	}
	return kit.NewMeter(cfg, dir, follow, a.Now, func(msg string) { a.WarnOnce(msg) }), nil
}

// tuiSpent returns the footer's view of meter, nil without one.
func tuiSpent(meter *budget.Meter) func() tui.Spent {
	if meter == nil {
		return nil
	}
	return func() tui.Spent {
		t, l := meter.Total(), meter.Limits()
		return tui.Spent{Tokens: t.Tokens(), USD: t.USD, Priced: len(t.Unpriced) == 0, LimitUSD: l.USD, LimitTokens: l.Tokens}
	}
}
