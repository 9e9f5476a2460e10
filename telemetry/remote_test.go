package telemetry_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/troupe-dev/troupe/telemetry"
)

// A remote job is a submit span on the lead and a run span on the worker
// (another process: its own provider), linked through the trace context
// the job carries; a failed run is an error span. Off, nothing is carried.
func TestRemoteJobSpans(t *testing.T) {
	provider := func() (*telemetry.Telemetry, *tracetest.InMemoryExporter) {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		t.Cleanup(func() { tp.Shutdown(context.Background()) })
		return telemetry.NewWith(tp), exp
	}
	lead, leadExp := provider()
	worker, workerExp := provider()
	ctx, run := lead.Start(context.Background(), telemetry.SpanRun)
	tp, end := lead.JobSubmitted(ctx, "r123")
	end(nil)
	run.End()
	if tp == "" {
		t.Fatal("no trace context for the job")
	}
	_, done := worker.JobRun(tp, "r123", "w1")
	done("the model failed")

	submit := leadExp.GetSpans().Snapshots()[0]
	job := workerExp.GetSpans().Snapshots()[0]
	if submit.Name() != telemetry.SpanSubmit || job.Name() != telemetry.SpanJob {
		t.Fatalf("spans %s, %s", submit.Name(), job.Name())
	}
	if submit.Parent().SpanID() != run.SpanContext().SpanID() {
		t.Error("the submit span is not under the lead's run")
	}
	if job.Parent().SpanID() != submit.SpanContext().SpanID() || !job.Parent().IsRemote() || job.SpanContext().TraceID() != run.SpanContext().TraceID() {
		t.Errorf("the job's run span has parent %v; want the submit span, in the lead's trace", job.Parent())
	}
	if job.Status().Code != codes.Error {
		t.Errorf("a failed job's span status = %v", job.Status())
	}
	attrs := map[string]string{}
	for _, kv := range job.Attributes() {
		attrs[string(kv.Key)] = kv.Value.AsString()
	}
	if attrs[telemetry.AttrJob] != "r123" || attrs[telemetry.AttrWorker] != "w1" {
		t.Errorf("job span attributes %v", attrs)
	}

	_, end = lead.JobSubmitted(ctx, "r124")
	end(errors.New("no worker"))
	if s := leadExp.GetSpans().Snapshots()[2]; s.Status().Code != codes.Error {
		t.Errorf("a failed submission's status = %v", s.Status())
	}

	var off *telemetry.Telemetry
	if tp, end := off.JobSubmitted(ctx, "r1"); tp != "" {
		t.Errorf("telemetry off carried %q", tp)
	} else {
		end(nil)
	}
	_, done = off.JobRun("", "r1", "w")
	done("")
}
