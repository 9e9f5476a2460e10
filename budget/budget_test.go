package budget_test

import (
	"errors"
	"math"
	"strings"
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

// The Anthropic prices, one call each: a dated snapshot and a "[1m]"
// name are priced as their model, and a long prompt on a model with a
// long-prompt price costs that price.
func TestDefaultPricesCost(t *testing.T) {
	u := llm.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000, CacheReadTokens: 1_000_000, CacheWriteTokens: 1_000_000}
	for _, tt := range []struct {
		model string
		u     llm.Usage
		want  float64
	}{
		{"claude-sonnet-5-5", u, 2 + 10 + 0.10 + 2.50},
		{"claude-opus-5-5", u, 4 + 20 + 0.20 + 5},
		{"claude-haiku-4-5-20251001", u, 1 + 5 + 0.10 + 1.25},
		{"claude-sonnet-5-5[1m]", llm.Usage{OutputTokens: 1000}, 0.01},
		{"claude-haiku-5-5", llm.Usage{InputTokens: 50_000, OutputTokens: 1000}, 0.005 + 0.0005},
		{"claude-haiku-5-5", llm.Usage{InputTokens: 200_000, OutputTokens: 1000}, 0.1 + 0.0025},
		{"claude-haiku-5-5", llm.Usage{InputTokens: 10, CacheReadTokens: 100_000, OutputTokens: 1000}, (10*0.5 + 100_000*0.05 + 1000*2.5) / 1e6},
		{"scripted", u, 0},
	} {
		p, ok := budget.DefaultPrices().Lookup(tt.model)
		if got := p.Cost(tt.u); !ok || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: %v, priced %v; want %v", tt.model, got, ok, tt.want)
		}
	}
	if _, ok := budget.DefaultPrices().Lookup("gpt-6"); ok {
		t.Error("gpt-6 is priced")
	}
	bad := budget.Table{"m": {Input: 1, Long: &budget.Price{Output: -1}}}
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "price of m: long: -1") {
		t.Errorf("Check of a negative long price: %v", err)
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
