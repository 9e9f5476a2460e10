// Package budget accounts for what agents spend: tokens and their cost in
// US dollars by agent and model, from a price table per model, and limits
// that a run checks after every model call.
//
// A Meter is safe for concurrent use; it does no I/O and reads no clock.
package budget

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

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
}

// Cost returns what u costs at p.
func (p Price) Cost(u llm.Usage) float64 {
	return (float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*p.CacheRead + float64(u.CacheWriteTokens)*p.CacheWrite) / 1e6
}

// Table maps a model id, or a prefix of one ("claude-sonnet-4-5" for
// "claude-sonnet-4-5-20250929"), to its price.
type Table map[string]Price

// DefaultPrices are the built-in list prices (USD per million tokens) of
// the models troupe knows; settings override or add entries with Merge.
func DefaultPrices() Table {
	return Table{
		"claude-opus-4":     {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
		"claude-sonnet-4":   {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		"claude-3-7-sonnet": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		"claude-haiku-4-5":  {Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
		"claude-3-5-haiku":  {Input: 0.8, Output: 4, CacheRead: 0.08, CacheWrite: 1},
		"gpt-5":             {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5-mini":        {Input: 0.25, Output: 2, CacheRead: 0.025},
		"gpt-5-nano":        {Input: 0.05, Output: 0.4, CacheRead: 0.005},
		"gpt-4.1":           {Input: 2, Output: 8, CacheRead: 0.5},
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
		for _, v := range []float64{p.Input, p.Output, p.CacheRead, p.CacheWrite} {
			if v < 0 || v != v || v > 1e6 {
				return fmt.Errorf("price of %s: %v is not a price in USD per million tokens", model, v)
			}
		}
	}
	return nil
}

// Lookup returns the price of model: an exact entry, else the longest
// entry that is a prefix of it at a "-" boundary.
func (t Table) Lookup(model string) (Price, bool) {
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

// Limits bound a run; zero means no bound.
type Limits struct {
	USD    float64
	Tokens int64 // input (cached included) plus output
}

// Spend is what one agent, or everyone, has used.
type Spend struct {
	Usage llm.Usage
	USD   float64
	// Unpriced lists the models used with no price in the table: their
	// tokens count, their cost does not.
	Unpriced []string
}

// Tokens returns every input and output token of s.
func (s Spend) Tokens() int64 { return s.Usage.TotalInput() + s.Usage.OutputTokens }

// ExceededError names the limit reached. It matches ErrExceeded.
type ExceededError struct {
	Limit string // "--max-budget-usd" or "--max-tokens"
	Spent string // what was spent, in the limit's unit
	Bound string
}

func (e *ExceededError) Error() string {
	return fmt.Sprintf("budget exceeded: %s spent, %s allows %s", e.Spent, e.Limit, e.Bound)
}

// Unwrap returns ErrExceeded.
func (e *ExceededError) Unwrap() error { return ErrExceeded }

// Meter sums spending by agent against limits.
type Meter struct {
	prices Table
	limits Limits

	mu      sync.Mutex
	byAgent map[string]*Spend // guarded by mu
	total   Spend             // guarded by mu
}

// NewMeter returns a Meter pricing with prices and checking limits.
func NewMeter(prices Table, limits Limits) *Meter {
	return &Meter{prices: prices, limits: limits, byAgent: map[string]*Spend{}}
}

// Add records one model call of agent on model. It returns an
// *ExceededError once the total reaches a limit (and on every later call).
func (m *Meter) Add(agent, model string, u llm.Usage) error {
	p, priced := m.prices.Lookup(model)
	cost := p.Cost(u)
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.byAgent[agent]
	if a == nil {
		a = &Spend{}
		m.byAgent[agent] = a
	}
	for _, s := range []*Spend{a, &m.total} {
		s.Usage = s.Usage.Add(u)
		s.USD += cost
		if !priced && !slices.Contains(s.Unpriced, model) {
			s.Unpriced = append(s.Unpriced, model)
		}
	}
	return m.exceededLocked()
}

// Exceeded returns an *ExceededError when a limit has been reached.
func (m *Meter) Exceeded() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.exceededLocked()
}

func (m *Meter) exceededLocked() error {
	if l := m.limits.USD; l > 0 && m.total.USD >= l {
		return &ExceededError{Limit: "--max-budget-usd", Spent: fmt.Sprintf("$%.4f", m.total.USD), Bound: fmt.Sprintf("$%.4f", l)}
	}
	if l := m.limits.Tokens; l > 0 && m.total.Tokens() >= l {
		return &ExceededError{Limit: "--max-tokens", Spent: fmt.Sprintf("%d tokens", m.total.Tokens()), Bound: fmt.Sprintf("%d", l)}
	}
	return nil
}

// Total returns everyone's spending.
func (m *Meter) Total() Spend {
	m.mu.Lock()
	defer m.mu.Unlock()
	return clone(m.total)
}

// ByAgent returns each agent's spending.
func (m *Meter) ByAgent() map[string]Spend {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]Spend, len(m.byAgent))
	for k, v := range m.byAgent {
		out[k] = clone(*v)
	}
	return out
}

func clone(s Spend) Spend {
	s.Unpriced = slices.Clone(s.Unpriced)
	return s
}
