package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/transcript"
	"github.com/troupe-dev/troupe/tui"
)

// exitBudget is the exit status of a run that a budget limit stopped
// (--max-budget-usd, --max-tokens).
const exitBudget = 6

// budgetFlags are a session's spending limits.
type budgetFlags struct {
	usd    float64
	tokens int64
}

func addBudgetFlags(f *pflag.FlagSet, b *budgetFlags) {
	f.Var((*usdValue)(&b.usd), "max-budget-usd", "stop the session once its agents (the lead, its teammates, their sub-agents) have spent `USD` at list prices: no new model call starts, and the run exits with status 6")
	f.Var((*tokensValue)(&b.tokens), "max-tokens", "stop the session once its agents have used `N` tokens (input, cached input and output), as --max-budget-usd does")
}

func (b budgetFlags) limits() budget.Limits { return budget.Limits{USD: b.usd, Tokens: b.tokens} }

// usdValue is a flag holding an amount in US dollars, refused at parsing
// when it is not one.
type usdValue float64

func (v *usdValue) String() string { return strconv.FormatFloat(float64(*v), 'f', -1, 64) }
func (v *usdValue) Type() string   { return "USD" }
func (v *usdValue) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err == nil {
		err = budget.Limits{USD: f}.Check("")
	}
	if err != nil {
		return fmt.Errorf("%q is not an amount in US dollars (want a positive number such as 2.50, or 0 for no limit)", s)
	}
	*v = usdValue(f)
	return nil
}

// tokensValue is a flag holding a number of tokens.
type tokensValue int64

func (v *tokensValue) String() string { return strconv.FormatInt(int64(*v), 10) }
func (v *tokensValue) Type() string   { return "N" }
func (v *tokensValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a number of tokens (want a positive whole number, or 0 for no limit)", s)
	}
	*v = tokensValue(n)
	return nil
}

// prices returns the built-in price table with the settings' modelPrices
// ({"model-id": {"input": 3, "output": 15, "cacheRead": 0.3,
// "cacheWrite": 3.75}}, US dollars per million tokens) over it.
func (a *app) prices(cwd string) (budget.Table, error) {
	home, err := a.Home()
	if err != nil {
		return nil, err
	}
	over, file, err := settings.Key[budget.Table](settings.Files(home, cwd), "modelPrices")
	if err != nil {
		return nil, err
	}
	if err := over.Check(); err != nil {
		return nil, fmt.Errorf("%s: modelPrices: %w", file, err)
	}
	return budget.DefaultPrices().Merge(over), nil
}

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
	meter, err := a.newMeter(cwd, lr.id, h.budget.limits(), func(e *budget.ExceededError) {
		lr.out.BudgetExceeded(e, notice)
		lr.budgetTeam(e) // budget_team.go: teammates are asked to shut down
	}, true)
	if err != nil {
		return nil, err
	}
	lr.out.Meter = meter
	if h.budget.limits() != (budget.Limits{}) {
		lr.defer_(a.watchLedger(meter, lr.id)) // budget_team.go: pane teammates' spending seen as it is written
	}
	lr.defer_(a.followClaudeMates(h, cwd, lr, meter)) // budget_claude.go: Claude Code teammates' spending
	return meter.Account(transcript.KindLead, budget.Limits{}).Model(model), nil
}

// meterPane meters a pane teammate's model in its own process: its
// --max-budget-usd is the lead's cap for it, and its calls go to the
// ledger of the lead's session.
func (a *app) meterPane(h *headless, cwd, session, name string, model llm.Model) (llm.Model, error) {
	meter, err := a.newMeter(cwd, session, h.budget.limits(), nil, false)
	if err != nil {
		return nil, err
	}
	return meter.Account(name, budget.Limits{}).Model(model), nil
}

// newMeter returns a session's meter recording into its ledger; with
// follow, the spending other processes of the session (pane teammates)
// append to the ledger counts toward limits too, brought in before every
// check.
func (a *app) newMeter(cwd, session string, limits budget.Limits, exceeded func(*budget.ExceededError), follow bool) (*budget.Meter, error) {
	prices, err := a.prices(cwd)
	if err != nil {
		return nil, err
	}
	// Every call counts in the metrics (telemetry.go), read when it is made.
	cfg := budget.Config{Prices: prices, Limits: limits, OnExceeded: exceeded, Record: func(r budget.Record) { a.tel.spent(r) }}
	dir := ""
	if home, err := a.Home(); err == nil && session != "" {
		dir = transcript.Dir(home, session)
	}
	return kit.NewMeter(cfg, dir, follow, a.Now, func(msg string) { a.WarnOnce(msg) }), nil
}

// budgetExit turns a run that a limit stopped into exit status 6, after
// saying why on stderr; other errors pass through.
func budgetExit(stderr io.Writer, err error) error {
	if !errors.Is(err, budget.ErrExceeded) {
		return err
	}
	fmt.Fprintf(stderr, "troupe: %s\n", termtext.Clean(err.Error()))
	return &ExitError{Code: exitBudget, Msg: err.Error()}
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
