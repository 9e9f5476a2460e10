package budget

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/troupe-dev/troupe/llm"
)

// Limits bound spending; zero means no bound.
type Limits struct {
	USD    float64
	Tokens int64 // input (cached included) plus output
}

// Check refuses negative or non-finite limits; name says whose they are
// in the error ("--max-budget-usd", "alice's maxBudgetUsd").
func (l Limits) Check(name string) error {
	if l.USD < 0 || l.USD != l.USD || l.USD > 1e9 {
		return fmt.Errorf("%s: %v is not an amount in US dollars (want a positive number, or 0 for no limit)", name, l.USD)
	}
	if l.Tokens < 0 {
		return fmt.Errorf("%s: %d is not a number of tokens (want a positive number, or 0 for no limit)", name, l.Tokens)
	}
	return nil
}

// Spend is what one agent, one model, or everyone has used.
type Spend struct {
	Usage llm.Usage `json:"usage"`
	USD   float64   `json:"usd"`
	Calls int       `json:"calls"`
	// Unpriced lists the models used with no price in the table: their
	// tokens count, their cost does not.
	Unpriced []string `json:"unpriced,omitempty"`
}

// Tokens returns every input and output token of s.
func (s Spend) Tokens() int64 { return s.Usage.TotalInput() + s.Usage.OutputTokens }

// Add returns s with one call of usage u costing usd added; model is
// listed as unpriced when priced is false.
func (s Spend) Add(model string, u llm.Usage, usd float64, priced bool) Spend {
	s.Usage = s.Usage.Add(u)
	s.USD += usd
	s.Calls++
	if !priced && !slices.Contains(s.Unpriced, model) {
		s.Unpriced = append(slices.Clone(s.Unpriced), model)
	}
	return s
}

// ExceededError names the limit reached. It matches ErrExceeded.
type ExceededError struct {
	// Agent is whose own limit was reached; "" for the session's.
	Agent string
	Limit string // "--max-budget-usd", "--max-tokens", "maxBudgetUsd"
	Spent string // what was spent, in the limit's unit
	Bound string
}

func (e *ExceededError) Error() string {
	who := ""
	if e.Agent != "" {
		who = e.Agent + " "
	}
	return fmt.Sprintf("budget exceeded: %s%s spent, %s allows %s", who, e.Spent, e.Limit, e.Bound)
}

// Unwrap returns ErrExceeded.
func (e *ExceededError) Unwrap() error { return ErrExceeded }

// exceeded returns an *ExceededError when s has reached l, naming the
// limits usdName and tokName.
func exceeded(s Spend, l Limits, agent, usdName, tokName string) *ExceededError {
	if l.USD > 0 && s.USD >= l.USD {
		return &ExceededError{Agent: agent, Limit: usdName, Spent: fmt.Sprintf("$%.4f", s.USD), Bound: fmt.Sprintf("$%.4f", l.USD)}
	}
	if l.Tokens > 0 && s.Tokens() >= l.Tokens {
		return &ExceededError{Agent: agent, Limit: tokName, Spent: fmt.Sprintf("%d tokens", s.Tokens()), Bound: fmt.Sprintf("%d tokens", l.Tokens)}
	}
	return nil
}

// Record is one model call's spending, as a Meter reports it to
// Config.Record.
type Record struct {
	Agent string    `json:"agent"`
	Model string    `json:"model"`
	Usage llm.Usage `json:"usage"`
	// USD is the call's cost at the prices of the time; nil when the
	// model has no price.
	USD *float64 `json:"usd,omitempty"`
}

// Config sets up a Meter.
type Config struct {
	Prices Table
	// Limits bound everyone's spending together (the session's).
	Limits Limits
	// Record, when set, is called after every charged call, outside the
	// Meter's lock, from the caller's goroutine (a usage file).
	Record func(Record)
	// OnExceeded, when set, is called once, when the session's limits
	// are first reached.
	OnExceeded func(*ExceededError)
	// Sync, when set, is called before every check of the session's
	// limits, outside the Meter's lock: it brings in what the session's
	// agents in other processes spent (Count), so that a check sees it.
	Sync func()
}

// Meter sums spending by agent and by model against the session's limits
// and each account's own. It is safe for concurrent use; it does no I/O
// and reads no clock itself.
type Meter struct {
	cfg Config

	mu      sync.Mutex
	byAgent map[string]Spend // guarded by mu
	byModel map[string]Spend // guarded by mu
	total   Spend            // guarded by mu
	told    bool             // guarded by mu; OnExceeded was called
}

// NewMeter returns a Meter on cfg; a nil price table means DefaultPrices.
func NewMeter(cfg Config) *Meter {
	if cfg.Prices == nil {
		cfg.Prices = DefaultPrices()
	}
	return &Meter{cfg: cfg, byAgent: map[string]Spend{}, byModel: map[string]Spend{}}
}

// Prices returns the meter's price table.
func (m *Meter) Prices() Table { return m.cfg.Prices }

// Limits returns the session's limits.
func (m *Meter) Limits() Limits { return m.cfg.Limits }

// Add records one model call of agent on model. It returns an
// *ExceededError once the total reaches a session limit (and on every
// later call).
func (m *Meter) Add(agent, model string, u llm.Usage) error {
	p, priced := m.cfg.Prices.Lookup(model)
	return m.add(agent, model, u, p.Cost(u), priced, true)
}

// Count adds a call another process recorded (its cost as recorded, else
// at this meter's prices), without recording it again. Its error is
// Add's.
func (m *Meter) Count(r Record) error {
	if r.USD != nil {
		return m.add(r.Agent, r.Model, r.Usage, *r.USD, true, false)
	}
	p, priced := m.cfg.Prices.Lookup(r.Model)
	return m.add(r.Agent, r.Model, r.Usage, p.Cost(r.Usage), priced, false)
}

func (m *Meter) add(agent, model string, u llm.Usage, cost float64, priced, record bool) error {
	m.mu.Lock()
	m.byAgent[agent] = m.byAgent[agent].Add(model, u, cost, priced)
	m.byModel[model] = m.byModel[model].Add(model, u, cost, priced)
	m.total = m.total.Add(model, u, cost, priced)
	ee := exceeded(m.total, m.cfg.Limits, "", "--max-budget-usd", "--max-tokens")
	tell := ee != nil && !m.told && m.cfg.OnExceeded != nil
	if ee != nil {
		m.told = true
	}
	m.mu.Unlock()
	if record && m.cfg.Record != nil {
		r := Record{Agent: agent, Model: model, Usage: u}
		if priced {
			r.USD = &cost
		}
		m.cfg.Record(r)
	}
	if tell {
		m.cfg.OnExceeded(ee)
	}
	if ee == nil {
		return nil // not a nil *ExceededError in an error
	}
	return ee
}

// Exceeded returns an *ExceededError when a session limit has been
// reached, else nil.
func (m *Meter) Exceeded() error {
	if m.cfg.Sync != nil {
		m.cfg.Sync()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if ee := exceeded(m.total, m.cfg.Limits, "", "--max-budget-usd", "--max-tokens"); ee != nil {
		return ee
	}
	return nil
}

// Total returns everyone's spending.
func (m *Meter) Total() Spend {
	m.mu.Lock()
	defer m.mu.Unlock()
	return clone(m.total)
}

// Totals returns everyone's spending and its lines by agent and by
// model, read at one moment: the lines add up to the total.
func (m *Meter) Totals() (total Spend, byAgent, byModel map[string]Spend) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return clone(m.total), cloneMap(m.byAgent), cloneMap(m.byModel)
}

// ByAgent returns each agent's spending.
func (m *Meter) ByAgent() map[string]Spend {
	m.mu.Lock()
	defer m.mu.Unlock()
	return cloneMap(m.byAgent)
}

// ByModel returns each model's spending.
func (m *Meter) ByModel() map[string]Spend {
	m.mu.Lock()
	defer m.mu.Unlock()
	return cloneMap(m.byModel)
}

// Agent returns one agent's spending.
func (m *Meter) Agent(name string) Spend {
	m.mu.Lock()
	defer m.mu.Unlock()
	return clone(m.byAgent[name])
}

func clone(s Spend) Spend {
	s.Unpriced = slices.Clone(s.Unpriced)
	return s
}

func cloneMap(in map[string]Spend) map[string]Spend {
	out := maps.Clone(in)
	for k, v := range out {
		out[k] = clone(v)
	}
	return out
}

// Account is one agent's purse under a Meter: its calls count toward the
// session's limits and toward its own (a teammate's maxBudgetUsd). Every
// Account of the same agent name shares that agent's spending.
type Account struct {
	m     *Meter
	agent string
	own   Limits
}

// Account returns agent's account, bounded by own besides the session's
// limits.
func (m *Meter) Account(agent string, own Limits) *Account {
	return &Account{m: m, agent: agent, own: own}
}

// Agent returns the account's agent name.
func (a *Account) Agent() string { return a.agent }

// Meter returns the meter the account charges.
func (a *Account) Meter() *Meter { return a.m }

// Add charges one model call on model; the error is Exceeded's after it.
func (a *Account) Add(model string, u llm.Usage) error {
	if err := a.m.Add(a.agent, model, u); err != nil {
		return err
	}
	return a.ownExceeded()
}

// Exceeded returns an *ExceededError when the session's limits or the
// account's own are reached, else nil.
func (a *Account) Exceeded() error {
	if err := a.m.Exceeded(); err != nil {
		return err
	}
	return a.ownExceeded()
}

func (a *Account) ownExceeded() error {
	if a.own == (Limits{}) {
		return nil
	}
	if ee := exceeded(a.m.Agent(a.agent), a.own, a.agent, "maxBudgetUsd", "maxTokens"); ee != nil {
		return ee
	}
	return nil
}
