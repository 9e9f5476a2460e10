package telemetry_test

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/telemetry"
)

// A message carries its sender's trace context in its metadata through a
// file store; the receiver, in another "process" (its own tracer provider
// and store on the same folder), starts its next run under it: the lead's
// session, its run and the teammate's run are one trace.
func TestTraceAcrossTheMailbox(t *testing.T) {
	root := t.TempDir()
	open := func() *file.Store {
		s, err := file.Open(root, file.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	leadStore, mateStore := open(), open()
	if _, err := team.Create(t.Context(), leadStore.Teams(), team.CreateOptions{Name: "tr", Cwd: root, Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	if _, err := team.AddMember(t.Context(), leadStore.Teams(), "tr", team.Member{Name: "alice", AgentID: team.AgentID("alice", "tr"), Cwd: root}, time.Now()); err != nil {
		t.Fatal(err)
	}
	provider := func() (*telemetry.Telemetry, *tracetest.InMemoryExporter) {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		t.Cleanup(func() { tp.Shutdown(context.Background()) })
		return telemetry.NewWith(tp), exp
	}
	leadTel, leadExp := provider()
	mateTel, mateExp := provider()

	sessCtx, session := leadTel.Start(context.Background(), telemetry.SpanSession)
	lead := leadTel.Agent(sessCtx, team.LeadName, "m")
	leadMail := lead.Mail(leadStore.Mail(), false)
	now := time.Now()
	lead.Observe(agent.Event{Type: agent.EventUser, At: now})
	if _, err := leadMail.Send(t.Context(), "tr", "alice", mailbox.Message{From: team.LeadName, Text: "build the widget"}); err != nil {
		t.Fatal(err)
	}
	lead.Observe(agent.Event{Type: agent.EventResult, At: now, Result: &agent.Result{}})
	session.End()

	alice := mateTel.Agent(context.Background(), "alice", "m")
	msgs, err := alice.Mail(mateStore.Mail(), true).Read(t.Context(), "tr", "alice", true)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("alice's inbox: %v, %v", msgs, err)
	}
	if _, ok := telemetry.SpanContextOf(msgs[0]); !ok {
		t.Fatalf("the message carries no trace context: %+v", msgs[0].Extra)
	}
	alice.Observe(agent.Event{Type: agent.EventUser, At: now})
	alice.Observe(agent.Event{Type: agent.EventResult, At: now, Result: &agent.Result{}})

	var leadRun, sess, mateRun sdktrace.ReadOnlySpan
	for _, s := range leadExp.GetSpans().Snapshots() {
		switch s.Name() {
		case telemetry.SpanRun:
			leadRun = s
		case telemetry.SpanSession:
			sess = s
		}
	}
	for _, s := range mateExp.GetSpans().Snapshots() {
		if s.Name() == telemetry.SpanRun {
			mateRun = s
		}
	}
	if leadRun == nil || sess == nil || mateRun == nil {
		t.Fatalf("spans: lead run %v, session %v, alice's run %v", leadRun, sess, mateRun)
	}
	if leadRun.Parent().SpanID() != sess.SpanContext().SpanID() {
		t.Error("the lead's run is not under the session span")
	}
	if mateRun.SpanContext().TraceID() != sess.SpanContext().TraceID() {
		t.Errorf("alice's run is in trace %s; want the session's %s", mateRun.SpanContext().TraceID(), sess.SpanContext().TraceID())
	}
	if mateRun.Parent().SpanID() != leadRun.SpanContext().SpanID() || !mateRun.Parent().IsRemote() {
		t.Errorf("alice's run's parent = %v; want the lead's run (remote)", mateRun.Parent())
	}
}

// With telemetry off there is no Agent, and its Mail is the store itself.
func TestAgentDisabled(t *testing.T) {
	tel, _ := telemetry.Setup(t.Context(), func(string) string { return "" }, "troupe", "test")
	a := tel.Agent(context.Background(), "x", "m")
	if a != nil {
		t.Fatal("an Agent with telemetry off")
	}
	a.Observe(agent.Event{Type: agent.EventUser})
	var ms mailbox.Store
	if got := a.Mail(ms, true); got != ms {
		t.Error("Mail wrapped a store with telemetry off")
	}
}
