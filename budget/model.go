package budget

import (
	"cmp"
	"context"
	"iter"

	"github.com/troupe-dev/troupe/llm"
)

// Model returns inner metered by a: a call is refused with an
// *ExceededError (before any request is sent) once a limit of a is
// reached, and every call that completes is charged to a, on the model
// the response names (else the request's, else inner's default). This is
// how limits stop new turns: an agent's run ends with the refusal as its
// error, which matches ErrExceeded. Sub-agents built on the returned
// model spend from the same account.
func (a *Account) Model(inner llm.Model) llm.Model {
	if m, ok := inner.(*metered); ok {
		inner = m.inner // never charged twice
	}
	return &metered{inner: inner, acct: a}
}

// For returns model charged to agent with its own limits, on the same
// meter as model when model is metered (Account.Model); a model that is
// not metered is returned as it is. A team builds its teammates' models
// this way from the lead's.
func For(model llm.Model, agent string, own Limits) llm.Model {
	m, ok := model.(*metered)
	if !ok {
		return model
	}
	return m.acct.m.Account(agent, own).Model(m.inner)
}

// AccountOf returns the account a metered model charges, and false for a
// model that is not metered.
func AccountOf(model llm.Model) (*Account, bool) {
	m, ok := model.(*metered)
	if !ok {
		return nil, false
	}
	return m.acct, true
}

type metered struct {
	inner llm.Model
	acct  *Account
}

func (m *metered) Info() llm.Info { return m.inner.Info() }

func (m *metered) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if err := m.acct.Exceeded(); err != nil {
			yield(llm.Event{}, err)
			return
		}
		for ev, err := range m.inner.Stream(ctx, req) {
			if err == nil && ev.Type == llm.EventDone && ev.Response != nil {
				// Charged before the agent sees the answer, so that its
				// next call is refused when this one used the last of it.
				_ = m.acct.Add(cmp.Or(ev.Response.Model, req.Model, m.inner.Info().Model), ev.Response.Usage)
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}
