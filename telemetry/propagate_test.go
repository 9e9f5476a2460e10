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

	byName := func(exp *tracetest.InMemoryExporter, name string) []sdktrace.ReadOnlySpan {
		var out []sdktrace.ReadOnlySpan
		for _, s := range exp.GetSpans().Snapshots() {
			if s.Name() == name {
				out = append(out, s)
			}
		}
		return out
	}
	// alice answers; the lead, which does not adopt, records the delivery
	// in its own trace, linked to alice's send.
	alice.Observe(agent.Event{Type: agent.EventUser, At: now})
	if _, err := alice.Mail(mateStore.Mail(), true).Send(t.Context(), "tr", team.LeadName, mailbox.Message{From: "alice", Text: "done"}); err != nil {
		t.Fatal(err)
	}
	alice.Observe(agent.Event{Type: agent.EventResult, At: now, Result: &agent.Result{}})
	for range 2 { // read twice before it is marked read: one delivery
		if _, err := leadMail.Read(t.Context(), "tr", team.LeadName, true); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(byName(leadExp, telemetry.SpanDeliver)); n != 1 {
		t.Errorf("%d deliveries of one message to the lead; want 1", n)
	}

	one := func(exp *tracetest.InMemoryExporter, name string, i int) sdktrace.ReadOnlySpan {
		t.Helper()
		ss := byName(exp, name)
		if len(ss) <= i {
			t.Fatalf("%d %s spans; want at least %d", len(ss), name, i+1)
		}
		return ss[i]
	}
	sess, leadRun, send := one(leadExp, telemetry.SpanSession, 0), one(leadExp, telemetry.SpanRun, 0), one(leadExp, telemetry.SpanSend, 0)
	deliver, mateRun := one(mateExp, telemetry.SpanDeliver, 0), one(mateExp, telemetry.SpanRun, 0)
	if leadRun.Parent().SpanID() != sess.SpanContext().SpanID() {
		t.Error("the lead's run is not under the session span")
	}
	if send.Parent().SpanID() != leadRun.SpanContext().SpanID() {
		t.Error("the lead's send is not under its run")
	}
	if deliver.Parent().SpanID() != send.SpanContext().SpanID() || !deliver.Parent().IsRemote() {
		t.Errorf("alice's delivery's parent = %v; want the lead's send (remote)", deliver.Parent())
	}
	if mateRun.Parent().SpanID() != deliver.SpanContext().SpanID() {
		t.Errorf("alice's run's parent = %v; want the delivery that woke her", mateRun.Parent())
	}
	if mateRun.SpanContext().TraceID() != sess.SpanContext().TraceID() {
		t.Errorf("alice's run is in trace %s; want the session's %s", mateRun.SpanContext().TraceID(), sess.SpanContext().TraceID())
	}
	attrs := map[string]string{}
	for _, kv := range deliver.Attributes() {
		attrs[string(kv.Key)] = kv.Value.AsString()
	}
	if attrs[telemetry.AttrMsgFrom] != team.LeadName || attrs[telemetry.AttrMsgTo] != "alice" || attrs[telemetry.AttrMsgKind] != "text" {
		t.Errorf("delivery attributes = %v", attrs)
	}
	aliceSend := one(mateExp, telemetry.SpanSend, 0)
	leadDeliver := one(leadExp, telemetry.SpanDeliver, 0)
	if ls := leadDeliver.Links(); len(ls) != 1 || ls[0].SpanContext.SpanID() != aliceSend.SpanContext().SpanID() {
		t.Errorf("the lead's delivery links %v; want alice's send", ls)
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
