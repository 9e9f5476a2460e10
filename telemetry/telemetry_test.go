package telemetry_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/telemetry"
	"github.com/troupe-dev/troupe/tool"
)

type echo struct{}

func (echo) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "Echo", Description: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (echo) ReadOnly(json.RawMessage) bool { return true }
func (echo) Run(context.Context, tool.Call) (tool.Result, error) {
	return tool.Result{Content: "echoed"}, nil
}

// runAgent runs a real agent (scripted model, one tool call) with onEvent.
func runAgent(t *testing.T, onEvent func(agent.Event)) {
	t.Helper()
	script, _ := json.Marshal(scripted.Script{Turns: []scripted.Turn{
		{Match: scripted.Match{User: "go"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "Echo", Input: json.RawMessage(`{}`)}},
			Usage: &llm.Usage{InputTokens: 100, OutputTokens: 20}}},
		{Match: scripted.Match{ToolResult: "Echo"}, Reply: scripted.Reply{Text: "done", Usage: &llm.Usage{InputTokens: 130, OutputTokens: 5, CacheReadTokens: 100}}},
	}})
	s, err := scripted.Parse(script)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tool.NewRegistry(echo{})
	if err != nil {
		t.Fatal(err)
	}
	ag, err := agent.New(agent.Config{Model: scripted.New(s), Tools: reg, OnEvent: onEvent})
	if err != nil {
		t.Fatal(err)
	}
	defer ag.Kill()
	if _, err := ag.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
}

// TestObserverSpans: one run of a real agent yields a run span with two
// model calls (token counts attached) and one tool call beneath it.
func TestObserverSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	tel := telemetry.NewWith(tp)
	runAgent(t, tel.Observer(t.Context(), "alice", "claude-sonnet-4-5"))

	spans := exp.GetSpans()
	count := map[string]int{}
	var run tracetest.SpanStub
	for _, s := range spans {
		count[s.Name]++
		if s.Name == telemetry.SpanRun {
			run = s
		}
	}
	if count[telemetry.SpanRun] != 1 || count[telemetry.SpanModel] != 2 || count[telemetry.SpanTool] != 1 {
		t.Fatalf("spans = %v; want 1 run, 2 model calls, 1 tool call", count)
	}
	var in, out int64
	for _, s := range spans {
		if s.Name != telemetry.SpanRun && s.Parent.SpanID() != run.SpanContext.SpanID() {
			t.Errorf("%s is not a child of the run span", s.Name)
		}
		for _, a := range s.Attributes {
			switch a.Key {
			case attribute.Key(telemetry.AttrInputTokens):
				in += a.Value.AsInt64()
			case attribute.Key(telemetry.AttrOutputTokens):
				out += a.Value.AsInt64()
			case attribute.Key(telemetry.AttrTool):
				if a.Value.AsString() != "Echo" {
					t.Errorf("tool span names %q", a.Value.AsString())
				}
			}
		}
	}
	if in != 330 || out != 25 {
		t.Errorf("tokens on model spans = %d in, %d out; want 330, 25", in, out)
	}
}

// TestDisabled: without an OTLP endpoint there is no hook at all.
func TestDisabled(t *testing.T) {
	tel, err := telemetry.Setup(t.Context(), func(string) string { return "" }, "troupe", "test")
	if err != nil {
		t.Fatal(err)
	}
	if tel.Enabled() || tel.Observer(t.Context(), "a", "m") != nil {
		t.Error("telemetry is on without an endpoint")
	}
	if err := tel.Close(t.Context()); err != nil {
		t.Error(err)
	}
}

// TestOTLPExport sends a run's spans to an in-process OTLP/HTTP receiver
// named by OTEL_EXPORTER_OTLP_ENDPOINT.
func TestOTLPExport(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	var ctype string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		if r.URL.Path == "/v1/traces" {
			bodies = append(bodies, b)
			ctype = r.Header.Get("Content-Type")
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer recv.Close()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL}
	tel, err := telemetry.Setup(t.Context(), func(k string) string { return env[k] }, "troupe", "test")
	if err != nil {
		t.Fatal(err)
	}
	runAgent(t, tel.Observer(t.Context(), "alice", "claude-sonnet-4-5"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tel.Close(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) == 0 || len(bodies[0]) == 0 || ctype != "application/x-protobuf" {
		t.Fatalf("receiver got %d trace exports (content type %q); want at least one protobuf body", len(bodies), ctype)
	}
}
