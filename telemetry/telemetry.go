// Package telemetry is troupe's one door to OpenTelemetry: it sets up
// tracing from the standard OTEL_* environment variables (OTLP over HTTP)
// and turns an agent's events into spans. Nothing else imports the
// OpenTelemetry modules.
//
// With no OTLP endpoint configured, Setup returns a disabled Telemetry
// whose Observer is nil, so a run adds no hook at all and pays nothing.
//
// A Telemetry is safe for concurrent use; each observer follows one agent
// and is safe for concurrent calls too.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/troupe-dev/troupe/agent"
)

// Span names and attribute keys troupe records.
const (
	SpanSession = "troupe.session"
	SpanRun     = "troupe.run"
	SpanModel   = "troupe.model"
	SpanTool    = "troupe.tool"
	SpanClaim   = "troupe.claim"           // a teammate claimed a task from the list
	SpanSend    = "troupe.message.send"    // an agent sent a message (its context rides in the message)
	SpanDeliver = "troupe.message.deliver" // the recipient took it from its inbox (woke)
	SpanSubmit  = "troupe.remote.submit"   // the lead submitted a remote job
	SpanJob     = "troupe.remote.run"      // a worker ran it (the submit span's child)

	AttrAgent        = "troupe.agent"
	AttrModel        = "gen_ai.request.model"
	AttrInputTokens  = "gen_ai.usage.input_tokens"
	AttrOutputTokens = "gen_ai.usage.output_tokens"
	AttrCacheRead    = "troupe.usage.cache_read_tokens"
	AttrTool         = "troupe.tool.name"
	AttrToolError    = "troupe.tool.is_error"
	AttrClaim        = "troupe.claim.task" // what was claimed: claimed task #3 "subject"
	AttrMsgFrom      = "troupe.message.from"
	AttrMsgTo        = "troupe.message.to"   // a name, or "*" for a broadcast
	AttrMsgKind      = "troupe.message.kind" // "text", or the protocol kind (shutdown_request, ...)
	AttrMsgID        = "troupe.message.id"
	AttrJob          = "troupe.remote.job"    // a remote job's id
	AttrWorker       = "troupe.remote.worker" // the worker that ran it
)

// Telemetry holds the tracer provider of one process.
type Telemetry struct {
	tp     trace.TracerProvider
	tracer trace.Tracer
	// shutdown flushes and stops the SDK provider; nil when disabled or
	// when the provider was given (NewWith).
	shutdown func(context.Context) error
	// counters are the metrics (metrics.go), nil without them; mshutdown
	// exports what is left and stops them.
	counters  *counters
	mshutdown func(context.Context) error
}

// Enabled reports whether spans are recorded.
func (t *Telemetry) Enabled() bool { return t != nil && t.tracer != nil }

// Setup reads OTEL_EXPORTER_OTLP_ENDPOINT and
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT through getenv: with neither set it
// returns a disabled Telemetry; otherwise traces go over OTLP/HTTP to
// that endpoint ("/v1/traces" appended to the general one). The exporter
// reads the other standard OTEL_EXPORTER_OTLP_* variables (headers,
// timeout, TLS) from the process environment.
func Setup(ctx context.Context, getenv func(string) string, service, version string) (*Telemetry, error) {
	url := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if url == "" {
		base := getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
		if base == "" {
			return &Telemetry{}, nil
		}
		url = strings.TrimSuffix(base, "/") + "/v1/traces"
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(url))
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP exporter: %w", err)
	}
	res := resource.NewSchemaless(semconv.ServiceName(service), semconv.ServiceVersion(version))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	t := NewWith(tp)
	t.shutdown = tp.Shutdown
	if err := t.setupMetrics(getenv, service, version, DefaultMetricInterval); err != nil {
		return nil, err
	}
	return t, nil
}

// NewWith returns a Telemetry recording into tp (tests give the SDK's
// in-memory exporter).
func NewWith(tp trace.TracerProvider) *Telemetry {
	return &Telemetry{tp: tp, tracer: tp.Tracer("github.com/troupe-dev/troupe")}
}

// Close flushes pending spans and stops the exporter, bounded by ctx.
func (t *Telemetry) Close(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs []error
	if t.shutdown != nil {
		if err := t.shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("telemetry: flush: %w", err))
		}
	}
	if t.mshutdown != nil {
		if err := t.mshutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("telemetry: flush metrics: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Observer returns an agent.Config.OnEvent hook that records the agent's
// runs, model calls (with token counts) and tool calls as spans under ctx's
// span, or nil when telemetry is disabled.
func (t *Telemetry) Observer(ctx context.Context, agentName, model string) func(agent.Event) {
	if !t.Enabled() {
		return nil
	}
	return t.Agent(ctx, agentName, model).Observe
}

// observer follows one agent's events.
type observer struct {
	t            *Telemetry
	agent, model string

	mu     sync.Mutex
	parent context.Context       // guarded by mu: where the next run's span starts
	run    context.Context       // guarded by mu: the current run's span context, nil between runs
	runSp  trace.Span            // guarded by mu
	call   trace.Span            // guarded by mu: the model call in flight
	tools  map[string]trace.Span // guarded by mu: tool calls in flight by id
	// delivered and order are the message ids recorded as delivered, the
	// oldest first (propagate.go); guarded by mu.
	delivered map[string]struct{}
	order     []string
}

func (o *observer) event(e agent.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	at := trace.WithTimestamp(e.At)
	if o.run == nil && e.Type != agent.EventResult {
		o.run, o.runSp = o.t.tracer.Start(o.parent, SpanRun, at, trace.WithAttributes(attribute.String(AttrAgent, o.agent)))
	}
	switch e.Type {
	case agent.EventUser, agent.EventToolResult, agent.EventRetry:
		if e.Type == agent.EventToolResult && e.ToolResult != nil {
			if sp := o.tools[e.ToolResult.ToolUseID]; sp != nil {
				sp.SetAttributes(attribute.Bool(AttrToolError, e.ToolResult.IsError))
				sp.End(at)
				delete(o.tools, e.ToolResult.ToolUseID)
			}
		}
		if o.call == nil && len(o.tools) == 0 {
			_, o.call = o.t.tracer.Start(o.run, SpanModel, at, trace.WithAttributes(attribute.String(AttrModel, o.model), attribute.String(AttrAgent, o.agent)))
		}
	case agent.EventAssistant:
		if o.call == nil {
			_, o.call = o.t.tracer.Start(o.run, SpanModel, at, trace.WithAttributes(attribute.String(AttrModel, o.model), attribute.String(AttrAgent, o.agent)))
		}
		if u := e.Usage; u != nil {
			o.call.SetAttributes(attribute.Int64(AttrInputTokens, u.TotalInput()), attribute.Int64(AttrOutputTokens, u.OutputTokens),
				attribute.Int64(AttrCacheRead, u.CacheReadTokens))
		}
		o.call.End(at)
		o.call = nil
	case agent.EventToolUse:
		if c := e.Call; c != nil {
			_, sp := o.t.tracer.Start(o.run, SpanTool, at, trace.WithAttributes(attribute.String(AttrTool, c.Name), attribute.String(AttrAgent, o.agent)))
			o.tools[c.ToolUseID] = sp
		}
	case agent.EventResult:
		if o.call != nil {
			o.call.End(at)
			o.call = nil
		}
		for id, sp := range o.tools {
			sp.End(at)
			delete(o.tools, id)
		}
		if o.runSp != nil {
			if e.Err != nil {
				o.runSp.RecordError(e.Err)
			}
			o.runSp.End(at)
		}
		o.run, o.runSp = nil, nil
	}
}

// Start starts a span named name under ctx (a session's root span, say);
// with telemetry disabled it returns ctx and a span that records nothing.
func (t *Telemetry) Start(ctx context.Context, name string) (context.Context, trace.Span) {
	if !t.Enabled() {
		return ctx, trace.SpanFromContext(ctx)
	}
	return t.tracer.Start(ctx, name)
}
