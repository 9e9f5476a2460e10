package budget_test

import (
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/llm"
)

func TestLookup(t *testing.T) {
	tab := budget.DefaultPrices().Merge(budget.Table{"gpt-5": {Input: 2, Output: 20}})
	for model, want := range map[string]float64{
		"claude-sonnet-4-5-20250929": 3,
		"claude-sonnet-4":            3,
		"gpt-5":                      2, // overridden
		"gpt-5-mini-2025-08-07":      0.25,
		"claude-haiku-4-5":           1,
	} {
		p, ok := tab.Lookup(model)
		if !ok || p.Input != want {
			t.Errorf("Lookup(%s) = %+v, %v; want input %v", model, p, ok, want)
		}
	}
	if _, ok := tab.Lookup("gpt-50"); ok {
		t.Error("gpt-50 matched gpt-5: a prefix must end at a '-'")
	}
	if err := (budget.Table{"x": {Input: -1}}).Check(); err == nil {
		t.Error("Check accepted a negative price")
	}
	if err := budget.DefaultPrices().Check(); err != nil {
		t.Error(err)
	}
}

func TestMeter(t *testing.T) {
	m := budget.NewMeter(budget.Config{Prices: budget.Table{"m": {Input: 3, Output: 15}}, Limits: budget.Limits{USD: 0.05}})
	// 1000 in + 1000 out = $0.003 + $0.015 = $0.018 a call.
	call := llm.Usage{InputTokens: 1000, OutputTokens: 1000}
	var wg sync.WaitGroup
	for _, who := range []string{"alice", "bob"} {
		wg.Go(func() {
			if err := m.Add(who, "m", call); err != nil {
				t.Errorf("first calls: %v", err)
			}
		})
	}
	wg.Wait()
	if got := m.Total().USD; math.Abs(got-0.036) > 1e-9 {
		t.Errorf("total = %v; want 0.036", got)
	}
	err := m.Add("alice", "m", call)
	var ee *budget.ExceededError
	if !errors.Is(err, budget.ErrExceeded) || !errors.As(err, &ee) || ee.Limit != "--max-budget-usd" {
		t.Fatalf("third call: %v; want the USD limit exceeded", err)
	}
	if a := m.ByAgent()["alice"]; a.Usage.InputTokens != 2000 || math.Abs(a.USD-0.036) > 1e-9 {
		t.Errorf("alice = %+v", a)
	}
	if m.Exceeded() == nil {
		t.Error("Exceeded() = nil after the limit")
	}
}

func TestUnpricedCountsTokens(t *testing.T) {
	m := budget.NewMeter(budget.Config{Limits: budget.Limits{Tokens: 100}})
	if err := m.Add("alice", "mystery-model", llm.Usage{InputTokens: 60, CacheReadTokens: 40}); !errors.Is(err, budget.ErrExceeded) {
		t.Fatalf("100 tokens with a 100 token limit: %v; want exceeded", err)
	}
	s := m.Total()
	if s.USD != 0 || len(s.Unpriced) != 1 || s.Unpriced[0] != "mystery-model" || s.Tokens() != 100 {
		t.Errorf("total = %+v", s)
	}
}
