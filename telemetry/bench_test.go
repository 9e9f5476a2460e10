package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/telemetry"
	"github.com/troupe-dev/troupe/tool"
)

// loopModel calls Echo until it has made n calls, with no latency.
type loopModel struct{ n int }

func (m *loopModel) Info() llm.Info { return llm.Info{Provider: "bench", Model: "loop"} }

func (m *loopModel) Stream(_ context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		calls := 0
		for _, msg := range req.Messages {
			if msg.Role == llm.RoleAssistant {
				calls++
			}
		}
		msg := llm.Message{Role: llm.RoleAssistant}
		stop := llm.StopEndTurn
		if calls < m.n {
			msg.Content = []llm.Block{llm.ToolUse(fmt.Sprintf("t%d", calls), "Echo", json.RawMessage(`{}`))}
			stop = llm.StopToolUse
		} else {
			msg.Content = []llm.Block{llm.Text("done")}
		}
		yield(llm.Event{Type: llm.EventDone, Response: &llm.Response{Message: msg, StopReason: stop, Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}}}, nil)
	}
}

// BenchmarkToolRound measures the agent loop's cost per tool round with
// telemetry off (no hook: what a run without an OTLP endpoint gets) and on
// (spans into the SDK with a batching in-memory exporter).
func BenchmarkToolRound(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			var hook func(agent.Event)
			if on {
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewInMemoryExporter()))
				defer tp.Shutdown(context.Background())
				hook = telemetry.NewWith(tp).Observer(context.Background(), "bench", "loop")
			}
			reg, _ := tool.NewRegistry(echo{})
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; {
				n := min(50, b.N-done)
				a, err := agent.New(agent.Config{Model: &loopModel{n: n}, Tools: reg, CompactAt: -1, OnEvent: hook})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := a.Run(context.Background(), "go"); err != nil {
					b.Fatal(err)
				}
				done += n
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/round")
		})
	}
}
