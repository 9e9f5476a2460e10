package swarm

import (
	"context"
	"errors"
	"strings"
	"testing"

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
