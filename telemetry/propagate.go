package telemetry

import (
	"context"
	"encoding/json"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/mailbox"
)

// TraceKey is the key of a message's metadata (mailbox.Message.Extra)
// that carries the W3C trace context (a "traceparent" value) of the span
// that sent it: a receiver in another process starts its next run under
// it, so that one team run is one trace across processes.
const TraceKey = "traceparent"

// Agent is one agent's telemetry: its event hook (Observe), and its
// mailbox (Mail) that stamps what it sends with the trace context of its
// current run and, with adopt, starts its next run under the trace
// context of the newest message it read.
type Agent struct{ o *observer }

// Agent returns agent name's telemetry, its runs under parent until a
// message read through Mail says otherwise; nil when telemetry is
// disabled (every method of a nil *Agent does nothing).
func (t *Telemetry) Agent(parent context.Context, name, model string) *Agent {
	if !t.Enabled() {
		return nil
	}
	return &Agent{o: &observer{t: t, parent: parent, agent: name, model: model, tools: map[string]trace.Span{}}}
}

// Observe is the agent's agent.Config.OnEvent hook.
func (a *Agent) Observe(e agent.Event) {
	if a != nil {
		a.o.event(e)
	}
}

// current returns the span context of what the agent does now: its run,
// else the parent its next run starts under.
func (a *Agent) current() trace.SpanContext {
	a.o.mu.Lock()
	defer a.o.mu.Unlock()
	if a.o.run != nil {
		return trace.SpanContextFromContext(a.o.run)
	}
	return trace.SpanContextFromContext(a.o.parent)
}

// Context returns a context holding the span context of what the agent
// does now (its run, else its parent): where work it starts belongs.
// Background for a nil Agent.
func (a *Agent) Context() context.Context {
	if a == nil {
		return context.Background()
	}
	return trace.ContextWithSpanContext(context.Background(), a.current())
}

// adopt makes the agent's next run start under sc, when no run is under
// way.
func (a *Agent) adopt(sc trace.SpanContext) {
	a.o.mu.Lock()
	defer a.o.mu.Unlock()
	if a.o.run == nil {
		a.o.parent = trace.ContextWithRemoteSpanContext(context.Background(), sc)
	}
}

// Mail wraps s for the agent: every message sent carries the trace context
// of the agent's current span under TraceKey; with adopt, a read that
// returns messages carrying one makes the newest the parent of the
// agent's next run (a teammate's runs join the trace of the message that
// woke it). With a nil Agent, s is returned as it is.
func (a *Agent) Mail(s mailbox.Store, adopt bool) mailbox.Store {
	if a == nil {
		return s
	}
	return tracedMail{Store: s, a: a, adopt: adopt}
}

type tracedMail struct {
	mailbox.Store
	a     *Agent
	adopt bool
}

var propagator = propagation.TraceContext{}

func (m tracedMail) Send(ctx context.Context, team, to string, msg mailbox.Message) ([]mailbox.Delivery, error) {
	m.a.o.t.messageSent(msg.From)
	if sc := m.a.current(); sc.IsValid() {
		carrier := propagation.MapCarrier{}
		propagator.Inject(trace.ContextWithSpanContext(context.Background(), sc), carrier)
		if tp := carrier.Get(TraceKey); tp != "" {
			msg.Extra = msg.Extra.Clone()
			if msg.Extra == nil {
				msg.Extra = map[string]json.RawMessage{}
			}
			b, _ := json.Marshal(tp)
			msg.Extra[TraceKey] = b
		}
	}
	return m.Store.Send(ctx, team, to, msg)
}

func (m tracedMail) Read(ctx context.Context, team, agentName string, unreadOnly bool) ([]mailbox.Message, error) {
	msgs, err := m.Store.Read(ctx, team, agentName, unreadOnly)
	if m.adopt && unreadOnly {
		for i := len(msgs) - 1; i >= 0; i-- {
			if sc, ok := SpanContextOf(msgs[i]); ok {
				m.a.adopt(sc)
				break
			}
		}
	}
	return msgs, err
}

// SpanContextOf returns the trace context msg carries under TraceKey.
func SpanContextOf(msg mailbox.Message) (trace.SpanContext, bool) {
	raw, ok := msg.Extra[TraceKey]
	if !ok {
		return trace.SpanContext{}, false
	}
	var tp string
	if json.Unmarshal(raw, &tp) != nil {
		return trace.SpanContext{}, false
	}
	ctx := propagator.Extract(context.Background(), propagation.MapCarrier{TraceKey: tp})
	sc := trace.SpanContextFromContext(ctx)
	return sc, sc.IsValid()
}
