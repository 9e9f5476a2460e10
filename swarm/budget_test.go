package swarm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/budget"
)

// A teammate whose own budget is spent stops: its next model call is
// refused, the lead learns why from its idle notification, and it leaves
// cleanly (not dead), while the lead's budget is untouched.
func TestTeammateStopsAtItsBudget(t *testing.T) {
	h := newHarness(t, script(
		`{"match":{"user":"start"},"reply":{"text":"ON IT","tool_calls":[{"id":"t1","name":"Nope","input":{}}],"usage":{"input_tokens":15,"output_tokens":5}}}`,
		`{"reply":{"text":"NEVER SENT"},"repeat":true}`), nil)
	meter := budget.NewMeter(budget.Config{})
	h.mateCfg = func(tc *TeammateConfig) {
		tc.Final = func(err error) bool { return errors.Is(err, budget.ErrExceeded) }
		build := tc.Build
		tc.Build = func(tm *Teammate) (agent.Config, error) {
			cfg, err := build(tm)
			cfg.Model = meter.Account(tc.Name, budget.Limits{Tokens: 20}).Model(cfg.Model)
			return cfg, err
		}
	}
	h.create("purse")
	h.spawn("ann", "start")
	h.waitFor("ann to exit", func() bool { return h.hasEvent("ann", EventExit, "exited") })
	if !h.hasEvent("ann", EventWarning, "budget exceeded: ann 20 tokens spent, maxTokens allows 20 tokens") {
		t.Error("no warning naming ann's spent budget")
	}
	if h.hasEvent("ann", EventDead, "") {
		t.Error("ann was reported dead; want a clean exit")
	}
	h.waitFor("the digest", func() bool { return h.hasEvent("ann", EventIdle, "ann is idle (failed") }) // the lead's event, not the teammate's own "idle (failed)"
	d := h.lead.TakeDigest()
	if !strings.Contains(d, "ann is idle (failed: budget exceeded") || !strings.Contains(d, "it has stopped working") {
		t.Errorf("digest = %q; want ann's failure naming its budget", d)
	}
	if got := h.model.Calls(); got != 1 {
		t.Errorf("the model saw %d calls; want 1 (the second was refused)", got)
	}
	cfg, err := h.store.Teams().Get(context.Background(), "purse")
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := cfg.Member("ann"); !ok || m.Active() {
		t.Errorf("ann in the team file = %+v, %v; want inactive", m, ok)
	}
}

// At the session's budget the lead asks its teammates to shut down and
// they approve without a model call: an idle one at once, a working one
// when its request comes or its next call is refused. Nobody is killed
// or reported dead, the lead's model learns why, and no model call runs
// past the cap.
func TestSessionBudgetAsksTeammatesToShutDown(t *testing.T) {
	h := newHarness(t, script(
		`{"match":{"user":"rest"},"reply":{"text":"BOB RESTS","usage":{"input_tokens":1,"output_tokens":1}}}`,
		`{"match":{"user":"work"},"reply":{"text":"ANN WORKS","tool_calls":[{"id":"t1","name":"Nope","input":{}}],"usage":{"input_tokens":15,"output_tokens":5}}}`,
		`{"reply":{"text":"NEVER SENT"},"repeat":true}`), nil)
	meter := budget.NewMeter(budget.Config{Limits: budget.Limits{Tokens: 20}, OnExceeded: func(ee *budget.ExceededError) {
		if _, err := h.lead.BudgetSpent(context.Background(), ee.Error()); err != nil {
			t.Errorf("BudgetSpent: %v", err)
		}
	}})
	h.mateCfg = func(tc *TeammateConfig) {
		tc.Spent = func(err error) bool { return errors.Is(err, budget.ErrExceeded) }
		build := tc.Build
		tc.Build = func(tm *Teammate) (agent.Config, error) {
			cfg, err := build(tm)
			cfg.Model = meter.Account(tc.Name, budget.Limits{}).Model(cfg.Model)
			return cfg, err
		}
	}
	h.create("purse")
	h.spawn("bob", "rest")
	h.waitFor("bob to go idle", func() bool { m, ok := h.member("purse", "bob"); return ok && !m.Active() })
	h.spawn("ann", "work")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h.waitFor("the budget to be spent", func() bool { return meter.Exceeded() != nil })
	if err := h.lead.Settled(ctx); err != nil {
		t.Fatalf("Settled: %v", err)
	}
	for _, name := range []string{"ann", "bob"} {
		if !h.hasEvent(name, EventShutdown, "asked "+name+" to shut down: budget exceeded: 22 tokens spent, --max-tokens allows 20 tokens") {
			t.Errorf("no shutdown request to %s on the timeline", name)
		}
		if !h.hasEvent(name, EventShutdown, "without a model call") {
			t.Errorf("%s did not approve by itself", name)
		}
		h.waitFor(name+" to be removed", func() bool { return h.hasEvent(name, EventExit, name+" has shut down") })
		if _, ok := h.member("purse", name); ok {
			t.Errorf("%s is still in the team file", name)
		}
		if h.hasEvent(name, EventDead, "") || h.hasEvent(name, EventWarning, "did not answer") {
			t.Errorf("%s was killed or reported dead; want it to leave as asked", name)
		}
	}
	if in := h.inputs(); !strings.Contains(in, "The session's budget is spent (budget exceeded: 22 tokens spent") || !strings.Contains(in, "ann, bob were asked to shut down") {
		t.Errorf("the lead was not told why:\n%s", in)
	}
	if got := h.model.Calls(); got != 2 {
		t.Errorf("the model saw %d calls; want 2 (none past the cap)", got)
	}
	if ps := h.lead.Problems(); len(ps) > 0 {
		t.Errorf("problems: %v", ps)
	}
	if _, err := h.lead.DeleteTeam(ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.lead.Led(); len(got) != 1 || got[0] != "purse" {
		t.Errorf("Led() after the delete = %v; want [purse]", got)
	}
}
