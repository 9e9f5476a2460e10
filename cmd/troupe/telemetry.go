package main

import (
	"context"
	"fmt"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/telemetry"
)

// teamTelemetry is the tracing of this process's agents: the lead's (or,
// in a pane teammate's process, nobody's) and the teammates built here.
// Its zero value is telemetry off: every method does nothing.
type teamTelemetry struct {
	tel  *telemetry.Telemetry
	lead *telemetry.Agent
}

// leadTelemetry sets up tracing of a lead session from the OTEL_*
// variables and returns the lead's event hook, nil when no OTLP endpoint
// is set. The session is one span; the lead's runs are under it, and the
// teammates' runs under the lead's run that spoke to them, through the
// trace context its messages carry. Spans are flushed when lr closes.
func (a *app) leadTelemetry(ctx context.Context, lr *leadRun) (func(agent.Event), error) {
	tel, err := a.setupTelemetry(ctx, lr.defer_)
	if err != nil || !tel.Enabled() {
		return nil, err
	}
	sctx, session := tel.Start(ctx, telemetry.SpanSession)
	lr.defer_(func() { session.End() }) // before the flush, which was deferred first
	a.tel = teamTelemetry{tel: tel, lead: tel.Agent(sctx, team.LeadName, lr.model)}
	return a.tel.lead.Observe, nil
}

// setupTelemetry sets tracing up from the OTEL_* variables; spans are
// flushed by the function handed to atClose.
func (a *app) setupTelemetry(ctx context.Context, atClose func(func())) (*telemetry.Telemetry, error) {
	tel, err := telemetry.Setup(ctx, a.Getenv, "troupe", a.Version)
	if err != nil || !tel.Enabled() {
		return tel, err
	}
	atClose(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tel.Close(ctx); err != nil {
			fmt.Fprintf(a.Stderr, "troupe: %v\n", err)
		}
	})
	return tel, nil
}

// leadMail is the lead's mailbox: what the lead sends carries the trace
// context of its current run.
func (t teamTelemetry) leadMail(s mailbox.Store) mailbox.Store { return t.lead.Mail(s, false) }

// mate returns the telemetry of a teammate built in this process: in the
// lead's process its runs start under the lead's current run; in its own
// process under the message that woke it.
func (t teamTelemetry) mate(name, model string) *telemetry.Agent {
	if t.tel == nil {
		return nil
	}
	return t.tel.Agent(t.lead.Context(), name, model)
}

// paneTelemetry sets up tracing in a pane teammate's own process; the
// returned function flushes it.
func (a *app) paneTelemetry(ctx context.Context) (func(), error) {
	var flush []func()
	tel, err := a.setupTelemetry(ctx, func(f func()) { flush = append(flush, f) })
	if err == nil && tel.Enabled() {
		a.tel = teamTelemetry{tel: tel}
	}
	return func() {
		for _, f := range flush {
			f()
		}
	}, err
}

// spent counts one model call in the metrics (budget.Config.Record).
func (t teamTelemetry) spent(r budget.Record) {
	u := r.Usage
	t.tel.Spent(r.Agent, r.Model, u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, r.USD)
}
