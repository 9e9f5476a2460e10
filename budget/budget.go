// Package budget accounts for what agents spend: tokens and their cost in
// US dollars by agent and model, from a price table per model, and
// enforces limits: the session's (--max-budget-usd, --max-tokens) and an
// agent's own (a teammate's maxBudgetUsd).
//
// A Meter sums spending; an Account is one agent's purse under it; and
// Account.Model meters a model, refusing every call once a limit is
// reached, so that a run stops before its next turn. Limits are checked
// between model calls, never in the middle of one: a call that starts
// under a limit finishes and is charged in full.
//
// Everything here is safe for concurrent use, does no I/O and reads no
// clock.
package budget

import (
	"errors"
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/llm"
)

// ErrExceeded reports that a limit was reached. Runs use it as the cause
// of the context they cancel (context.WithCancelCause).
var ErrExceeded = errors.New("budget exceeded")

// Price is what a model charges, in US dollars per million tokens.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead,omitempty"`
	CacheWrite float64 `json:"cacheWrite,omitempty"`
	// Long, when set, is the price of a call whose prompt (input, cache
	// reads and cache writes) is over LongAbove tokens.
	Long      *Price `json:"long,omitempty"`
	LongAbove int64  `json:"longAbove,omitempty"`
}

// Cost returns what one model call's usage u costs at p.
func (p Price) Cost(u llm.Usage) float64 {
	if p.Long != nil && u.TotalInput() > p.LongAbove {
		p = *p.Long
	}
	return (float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*p.CacheRead + float64(u.CacheWriteTokens)*p.CacheWrite) / 1e6
}

// Table maps a model id, or a prefix of one ("claude-sonnet-4-5" for
// "claude-sonnet-4-5-20250929"), to its price.
type Table map[string]Price

// DefaultPrices are the built-in list prices (USD per million tokens) of
// the models troupe knows, the one price list of troupe: the default
// model of every provider and the models llm/anthropic and llm/openai
// know are in it (cli/agentflags tests so). Settings override or add
// entries with Merge (modelPrices). Anthropic's are its Claude API list
// prices (late 2026) with five-minute cache writes, the only ones troupe
// asks for; OpenAI's have no cache-write charge.
func DefaultPrices() Table {
	return Table{
		// Anthropic.
		"claude-sonnet-5-5": {Input: 2, Output: 10, CacheRead: 0.10, CacheWrite: 2.50},
		"claude-opus-5-5":   {Input: 4, Output: 20, CacheRead: 0.20, CacheWrite: 5},
		"claude-haiku-5-5": {Input: 0.10, Output: 0.50, CacheRead: 0.01, CacheWrite: 0.125,
			Long: &Price{Input: 0.50, Output: 2.50, CacheRead: 0.05, CacheWrite: 0.625}, LongAbove: 100_000},
		"claude-sonnet-5":   {Input: 2, Output: 10, CacheRead: 0.20, CacheWrite: 2.50},
		"claude-opus-5":     {Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25},
		"claude-opus-4-5":   {Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25},
		"claude-opus-4":     {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
		"claude-sonnet-4":   {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		"claude-3-7-sonnet": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		"claude-haiku-4-5":  {Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
		"claude-3-5-haiku":  {Input: 0.8, Output: 4, CacheRead: 0.08, CacheWrite: 1},
		// OpenAI.
		"gpt-5":      {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5-mini": {Input: 0.25, Output: 2, CacheRead: 0.025},
		"gpt-5-nano": {Input: 0.05, Output: 0.4, CacheRead: 0.005},
		"gpt-4.1":    {Input: 2, Output: 8, CacheRead: 0.5},
		"gpt-4o":     {Input: 2.5, Output: 10, CacheRead: 1.25},
		"o3":         {Input: 2, Output: 8, CacheRead: 0.5},
		"o4-mini":    {Input: 1.1, Output: 4.4, CacheRead: 0.275},
		// The scripted provider's default model (tests, demos): free.
		"scripted": {},
	}
}

// Merge returns t with the entries of over added or replacing its own.
func (t Table) Merge(over Table) Table {
	out := make(Table, len(t)+len(over))
	for k, v := range t {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// Check refuses negative or non-finite prices, naming the model.
func (t Table) Check() error {
	for model, p := range t {
		if err := p.check(); err != nil {
			return fmt.Errorf("price of %s: %w", model, err)
		}
		if p.Long != nil {
			if p.Long.Long != nil {
				return fmt.Errorf("price of %s: long: a long-prompt price has no long price of its own", model)
			}
			if err := p.Long.check(); err != nil {
				return fmt.Errorf("price of %s: long: %w", model, err)
			}
		}
		if p.LongAbove < 0 {
			return fmt.Errorf("price of %s: longAbove %d is not a number of tokens", model, p.LongAbove)
		}
	}
	return nil
}

func (p Price) check() error {
	for _, v := range []float64{p.Input, p.Output, p.CacheRead, p.CacheWrite} {
		if v < 0 || v != v || v > 1e6 {
			return fmt.Errorf("%v is not a price in USD per million tokens", v)
		}
	}
	return nil
}

// Lookup returns the price of model: an exact entry, else the longest
// entry that is a prefix of it at a "-" boundary. A "[1m]" suffix (the
// one-million-token window Claude Code names that way) is ignored.
func (t Table) Lookup(model string) (Price, bool) {
	model = strings.TrimSuffix(model, "[1m]")
	if p, ok := t[model]; ok {
		return p, true
	}
	best := ""
	for k := range t {
		if strings.HasPrefix(model, k+"-") && len(k) > len(best) {
			best = k
		}
	}
	if best == "" {
		return Price{}, false
	}
	return t[best], true
}
