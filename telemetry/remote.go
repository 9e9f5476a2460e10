package telemetry

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// JobSubmitted records the submission of remote job id under ctx's span
// (the lead's current run): a troupe.remote.submit span. It returns the
// trace context the job carries to its worker ("" with telemetry off)
// and the end of the span, called with the submission's error.
func (t *Telemetry) JobSubmitted(ctx context.Context, id string) (string, func(error)) {
	if !t.Enabled() {
		return "", func(error) {}
	}
	ctx, sp := t.tracer.Start(ctx, SpanSubmit, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(attribute.String(AttrJob, id)))
	carrier := propagation.MapCarrier{}
	propagator.Inject(ctx, carrier)
	return carrier.Get(TraceKey), func(err error) {
		if err != nil {
			sp.RecordError(err)
			sp.SetStatus(codes.Error, "submit failed")
		}
		sp.End()
	}
}

// JobRun records a worker's run of remote job id: a troupe.remote.run
// span, the child of the lead's submit span when traceparent is its
// context (else a root). It returns the run's context (where the job's
// agent spans belong) and the end of the span, called with the run's
// error text ("" for a success).
func (t *Telemetry) JobRun(traceparent, id, worker string) (context.Context, func(errText string)) {
	if !t.Enabled() {
		return context.Background(), func(string) {}
	}
	parent := propagator.Extract(context.Background(), propagation.MapCarrier{TraceKey: traceparent})
	ctx, sp := t.tracer.Start(parent, SpanJob, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attribute.String(AttrJob, id), attribute.String(AttrWorker, worker)))
	return ctx, func(errText string) {
		if errText != "" {
			sp.RecordError(errors.New(errText))
			sp.SetStatus(codes.Error, "job failed")
		}
		sp.End()
	}
}
