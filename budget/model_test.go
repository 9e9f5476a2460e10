package budget_test

import (
	"context"
	"errors"
	"iter"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/llm"
)

// fixed answers every call with the same usage and counts the calls that
// reached it.
type fixed struct {
	usage llm.Usage
	calls atomic.Int32
}

func (f *fixed) Info() llm.Info { return llm.Info{Provider: "test", Model: "m"} }

func (f *fixed) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		f.calls.Add(1)
		if !yield(llm.Event{Type: llm.EventText, Text: "hi"}, nil) {
			return
		}
		yield(llm.Event{Type: llm.EventDone, Response: &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}, Usage: f.usage}}, nil)
	}
}

func TestModelRefusesOnceTheSessionLimitIsReached(t *testing.T) {
	inner := &fixed{usage: llm.Usage{InputTokens: 1000, OutputTokens: 1000}} // $0.018 a call at m's price
	var told []*budget.ExceededError
	var recs []budget.Record
	var mu sync.Mutex
	meter := budget.NewMeter(budget.Config{Prices: budget.Table{"m": {Input: 3, Output: 15}}, Limits: budget.Limits{USD: 0.05},
		Record:     func(r budget.Record) { mu.Lock(); recs = append(recs, r); mu.Unlock() },
		OnExceeded: func(e *budget.ExceededError) { told = append(told, e) }})
	lead := meter.Account("lead", budget.Limits{}).Model(inner)
	alice := budget.For(lead, "alice", budget.Limits{})
	for i, m := range []llm.Model{lead, alice, lead} {
		if _, err := llm.Complete(t.Context(), m, llm.Request{}); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	// $0.054 spent: every later call is refused before it is sent.
	for _, m := range []llm.Model{lead, alice} {
		_, err := llm.Complete(t.Context(), m, llm.Request{})
		var ee *budget.ExceededError
		if !errors.As(err, &ee) || ee.Limit != "--max-budget-usd" || ee.Agent != "" {
			t.Fatalf("call past the limit: %v; want the session's --max-budget-usd exceeded", err)
		}
	}
	if n := inner.calls.Load(); n != 3 {
		t.Errorf("the provider saw %d calls; want 3 (refused calls are never sent)", n)
	}
	if len(told) != 1 {
		t.Errorf("OnExceeded called %d times; want once", len(told))
	}
	if len(recs) != 3 || recs[1].Agent != "alice" || recs[1].Model != "m" || recs[1].USD == nil || math.Abs(*recs[1].USD-0.018) > 1e-9 {
		t.Errorf("records = %+v; want 3, the second alice's on m costing $0.018", recs)
	}
	if got := meter.Agent("lead"); got.Calls != 2 || got.Usage.InputTokens != 2000 {
		t.Errorf("lead spent %+v; want 2 calls, 2000 input tokens", got)
	}
	if got := meter.ByModel()["m"]; got.Calls != 3 {
		t.Errorf("m's spending = %+v; want 3 calls", got)
	}
}

func TestOwnLimitStopsOnlyThatAgent(t *testing.T) {
	inner := &fixed{usage: llm.Usage{InputTokens: 60, OutputTokens: 40}}
	meter := budget.NewMeter(budget.Config{Limits: budget.Limits{Tokens: 1000}})
	lead := meter.Account("lead", budget.Limits{}).Model(inner)
	bob := budget.For(lead, "bob", budget.Limits{Tokens: 150})
	for range 2 { // 100, then 200 tokens: past bob's 150 after the second
		if _, err := llm.Complete(t.Context(), bob, llm.Request{}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := llm.Complete(t.Context(), bob, llm.Request{})
	var ee *budget.ExceededError
	if !errors.As(err, &ee) || ee.Agent != "bob" || ee.Limit != "maxTokens" {
		t.Fatalf("bob's third call: %v; want bob's own maxTokens exceeded", err)
	}
	if !errors.Is(err, budget.ErrExceeded) {
		t.Errorf("%v does not match ErrExceeded", err)
	}
	if _, err := llm.Complete(t.Context(), lead, llm.Request{}); err != nil {
		t.Errorf("the lead's call after bob's limit: %v; want it to run", err)
	}
	if a, ok := budget.AccountOf(bob); !ok || a.Agent() != "bob" {
		t.Errorf("AccountOf(bob) = %v, %v", a, ok)
	}
	if m := budget.For(inner, "x", budget.Limits{}); m != llm.Model(inner) {
		t.Error("For wrapped a model that was not metered")
	}
}

func TestModelMetersConcurrentAgents(t *testing.T) {
	inner := &fixed{usage: llm.Usage{InputTokens: 1, OutputTokens: 1}}
	meter := budget.NewMeter(budget.Config{})
	lead := meter.Account("lead", budget.Limits{}).Model(inner)
	var wg sync.WaitGroup
	for _, who := range []string{"a", "b", "c", "d"} {
		m := budget.For(lead, who, budget.Limits{})
		wg.Go(func() {
			for range 50 {
				if _, err := llm.Complete(context.Background(), m, llm.Request{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := meter.Total(); got.Calls != 200 || got.Tokens() != 400 {
		t.Errorf("total = %+v; want 200 calls, 400 tokens", got)
	}
	if got := meter.ByAgent(); len(got) != 4 || got["c"].Calls != 50 {
		t.Errorf("by agent = %+v", got)
	}
}

func TestLimitsCheck(t *testing.T) {
	for _, l := range []budget.Limits{{USD: -1}, {USD: math.NaN()}, {USD: math.Inf(1)}, {Tokens: -5}} {
		if err := l.Check("--max-budget-usd"); err == nil {
			t.Errorf("Check(%+v) = nil; want an error", l)
		}
	}
	if err := (budget.Limits{USD: 2.5, Tokens: 10}).Check("x"); err != nil {
		t.Errorf("Check of good limits: %v", err)
	}
}

// BenchmarkModel measures what metering adds to one model call: the
// limit check before it and the charge after it.
func BenchmarkModel(b *testing.B) {
	inner := &fixed{usage: llm.Usage{InputTokens: 1000, OutputTokens: 100}}
	meter := budget.NewMeter(budget.Config{Limits: budget.Limits{USD: 1e9}})
	for _, bm := range []struct {
		name string
		m    llm.Model
	}{
		{"raw", inner},
		{"metered", meter.Account("lead", budget.Limits{}).Model(inner)},
		{"metered-own-limit", meter.Account("alice", budget.Limits{USD: 1e9}).Model(inner)},
	} {
		b.Run(bm.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				if _, err := llm.Complete(ctx, bm.m, llm.Request{Model: "claude-sonnet-4-5"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Spending recorded by other processes, brought in by Sync before each
// check, counts toward the session's limits without being recorded again.
func TestSyncCountsOtherProcesses(t *testing.T) {
	var recorded int
	pending := []budget.Record{{Agent: "ann", Model: "m", Usage: llm.Usage{InputTokens: 900}}}
	var meter *budget.Meter
	meter = budget.NewMeter(budget.Config{Limits: budget.Limits{Tokens: 1000},
		Record: func(budget.Record) { recorded++ },
		Sync: func() {
			for _, r := range pending {
				_ = meter.Count(r)
			}
			pending = nil
		}})
	lead := meter.Account("lead", budget.Limits{}).Model(&fixed{usage: llm.Usage{InputTokens: 100}})
	if _, err := llm.Complete(t.Context(), lead, llm.Request{}); err != nil {
		t.Fatalf("first call (ann's 900 tokens counted, 100 left): %v", err)
	}
	if _, err := llm.Complete(t.Context(), lead, llm.Request{}); !errors.Is(err, budget.ErrExceeded) {
		t.Fatalf("second call: %v; want the session's limit reached (ann 900 + lead 100)", err)
	}
	if recorded != 1 {
		t.Errorf("recorded %d calls; want 1 (ann's came from elsewhere)", recorded)
	}
	if got := meter.Agent("ann"); got.Calls != 1 || got.Usage.InputTokens != 900 {
		t.Errorf("ann = %+v", got)
	}
}
