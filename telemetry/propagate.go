package telemetry

import (
	"context"
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
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
	parent := trace.ContextWithSpanContext(context.Background(), m.a.current())
	_, sp := m.a.o.t.tracer.Start(parent, SpanSend, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(
		attribute.String(AttrAgent, m.a.o.agent), attribute.String(AttrMsgFrom, msg.From), attribute.String(AttrMsgTo, to),
		attribute.String(AttrMsgKind, messageKind(msg.Text))))
	defer sp.End()
	// The message carries the send span's context: the recipient's
	// delivery span is its child.
	carrier := propagation.MapCarrier{}
	propagator.Inject(trace.ContextWithSpan(context.Background(), sp), carrier)
	if tp := carrier.Get(TraceKey); tp != "" {
		msg.Extra = msg.Extra.Clone()
		if msg.Extra == nil {
			msg.Extra = map[string]json.RawMessage{}
		}
		b, _ := json.Marshal(tp)
		msg.Extra[TraceKey] = b
	}
	ds, err := m.Store.Send(ctx, team, to, msg)
	if err != nil {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, "send failed")
	}
	return ds, err
}

func (m tracedMail) Read(ctx context.Context, team, agentName string, unreadOnly bool) ([]mailbox.Message, error) {
	msgs, err := m.Store.Read(ctx, team, agentName, unreadOnly)
	if unreadOnly && agentName == m.a.o.agent { // another's inbox read (a look, a gauge) delivers nothing
		m.delivered(agentName, msgs)
	}
	return msgs, err
}

// delivered records the delivery of each unread message that carries its
// send span's context: a troupe.message.deliver span, the send span's
// child when the agent adopts what wakes it (its next run starts under
// the newest delivery), else a span of the agent's own trace linked to
// the send.
func (m tracedMail) delivered(agentName string, msgs []mailbox.Message) {
	var newest trace.SpanContext
	for _, msg := range msgs {
		sc, ok := SpanContextOf(msg)
		if !ok || !m.a.firstDelivery(msg.ID) {
			continue
		}
		attrs := trace.WithAttributes(attribute.String(AttrAgent, m.a.o.agent), attribute.String(AttrMsgFrom, msg.From),
			attribute.String(AttrMsgTo, agentName), attribute.String(AttrMsgKind, messageKind(msg.Text)), attribute.String(AttrMsgID, msg.ID))
		kind := trace.WithSpanKind(trace.SpanKindConsumer)
		var sp trace.Span
		if m.adopt {
			_, sp = m.a.o.t.tracer.Start(trace.ContextWithRemoteSpanContext(context.Background(), sc), SpanDeliver, attrs, kind)
			newest = sp.SpanContext()
		} else {
			_, sp = m.a.o.t.tracer.Start(m.a.Context(), SpanDeliver, attrs, kind, trace.WithLinks(trace.Link{SpanContext: sc}))
		}
		sp.End()
	}
	if newest.IsValid() {
		m.a.adopt(newest)
	}
}

// maxDelivered bounds the message ids an Agent remembers as delivered.
const maxDelivered = 1024

// firstDelivery reports whether the message id is read for the first
// time: a message still unread at a second look (read again before it
// was marked read) is one delivery.
func (a *Agent) firstDelivery(id string) bool {
	if id == "" {
		return true
	}
	a.o.mu.Lock()
	defer a.o.mu.Unlock()
	if _, ok := a.o.delivered[id]; ok {
		return false
	}
	if a.o.delivered == nil {
		a.o.delivered = map[string]struct{}{}
	}
	a.o.delivered[id] = struct{}{}
	a.o.order = append(a.o.order, id)
	if len(a.o.order) > maxDelivered {
		delete(a.o.delivered, a.o.order[0])
		a.o.order = a.o.order[1:]
	}
	return true
}

// messageKind is a message's protocol kind, "text" for plain text.
func messageKind(text string) string {
	if k := mailbox.ProtocolKind(text); k != "" {
		return k
	}
	return "text"
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
