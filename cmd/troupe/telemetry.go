package main

import (
	"context"
	"fmt"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/telemetry"
)

// leadTelemetry sets up tracing of a lead run from the OTEL_* variables
// and returns the lead's event hook, nil when no OTLP endpoint is set.
// Spans are flushed when lr closes.
func (a *app) leadTelemetry(ctx context.Context, lr *leadRun) (func(agent.Event), error) {
	tel, err := telemetry.Setup(ctx, a.Getenv, "troupe", a.Version)
	if err != nil {
		return nil, err
	}
	if !tel.Enabled() {
		return nil, nil
	}
	lr.defer_(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tel.Close(ctx); err != nil {
			fmt.Fprintf(a.Stderr, "troupe: %v\n", err)
		}
	})
	return tel.Observer(ctx, team.LeadName, lr.model), nil
}
