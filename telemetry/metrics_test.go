package telemetry_test

import (
	"context"
	"math"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/mem"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/telemetry"
	"github.com/troupe-dev/troupe/telemetry/telemetrytest"
)

// Tokens and cost by agent and model, and messages by sender, reach an
// OTLP/HTTP receiver as cumulative sums when telemetry closes.
func TestMetricsExport(t *testing.T) {
	recv := telemetrytest.New(t)
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL}
	tel, err := telemetry.Setup(t.Context(), func(k string) string { return env[k] }, "troupe", "test")
	if err != nil {
		t.Fatal(err)
	}
	usd := 0.25
	tel.Spent("alice", "claude-sonnet-4-5", 1000, 200, 50, 0, &usd)
	tel.Spent("alice", "claude-sonnet-4-5", 500, 100, 0, 0, &usd)
	tel.Spent("bob", "local", 7, 3, 0, 0, nil)
	store := mem.New(mem.Options{})
	defer store.Close()
	if _, err := team.Create(t.Context(), store.Teams(), team.CreateOptions{Name: "m", Cwd: t.TempDir(), Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	lead := tel.Agent(context.Background(), team.LeadName, "x")
	if _, err := lead.Mail(store.Mail(), false).Send(t.Context(), "m", team.LeadName, mailbox.Message{From: team.LeadName, Text: "note to self"}); err != nil {
		t.Fatal(err)
	}
	tel.Agent(context.Background(), "bob", "local").Claimed("claimed task #1")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tel.Close(ctx); err != nil {
		t.Fatal(err)
	}
	last := map[string]telemetrytest.Point{}
	for _, p := range recv.Points() {
		last[p.Metric+"/"+p.Attrs[telemetry.AttrAgent]+"/"+p.Attrs[telemetry.AttrModel]+"/"+p.Attrs[telemetry.AttrTokenType]] = p
	}
	for key, want := range map[string]int64{
		telemetry.MetricTokens + "/alice/claude-sonnet-4-5/input":      1500,
		telemetry.MetricTokens + "/alice/claude-sonnet-4-5/output":     300,
		telemetry.MetricTokens + "/alice/claude-sonnet-4-5/cache_read": 50,
		telemetry.MetricTokens + "/bob/local/input":                    7,
		telemetry.MetricMessages + "/team-lead//":                      1,
		telemetry.MetricClaims + "/bob//":                              1,
	} {
		if got := last[key].Int; got != want {
			t.Errorf("%s = %d; want %d", key, got, want)
		}
	}
	if got := last[telemetry.MetricCost+"/alice/claude-sonnet-4-5/"].Double; math.Abs(got-0.5) > 1e-9 {
		t.Errorf("alice's cost = %v; want 0.5", got)
	}
	if _, ok := last[telemetry.MetricCost+"/bob/local/"]; ok {
		t.Error("an unpriced call has a cost")
	}
	claimed := false
	for _, s := range recv.Spans() {
		claimed = claimed || (s.Name == telemetry.SpanClaim && s.Attrs[telemetry.AttrAgent] == "bob" && s.Attrs[telemetry.AttrClaim] == "claimed task #1")
	}
	if !claimed {
		t.Errorf("no claim span of bob's among %+v", recv.Spans())
	}
	if errs := recv.Errors(); len(errs) > 0 {
		t.Error(errs)
	}
}

// Task durations are a histogram by task type and status, and the queue
// depths gauges read at each collection: seen through the SDK's manual
// reader, and over OTLP/HTTP by the receiver.
func TestTaskDurationsAndDepths(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	tel := telemetry.NewWith(sdktrace.NewTracerProvider())
	if err := tel.WithMeter(mp); err != nil {
		t.Fatal(err)
	}
	tel.TaskEnded("local_bash", "completed", 2*time.Second)
	tel.TaskEnded("local_bash", "completed", 4*time.Second)
	tel.TaskEnded("remote_agent", "failed", 40*time.Second)
	unread := int64(3)
	if err := tel.ObserveDepths(func(context.Context) telemetry.Depths {
		return telemetry.Depths{Inboxes: map[string]int64{"ann": unread, team.LeadName: 0}, Tasks: 2, Jobs: 1}
	}); err != nil {
		t.Fatal(err)
	}
	collect := func() map[string]float64 {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(t.Context(), &rm); err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				switch d := m.Data.(type) {
				case metricdata.Histogram[float64]:
					for _, dp := range d.DataPoints {
						typ, _ := dp.Attributes.Value(telemetry.AttrTaskType)
						st, _ := dp.Attributes.Value(telemetry.AttrTaskStatus)
						out[m.Name+"/"+typ.AsString()+"/"+st.AsString()+"/count"] = float64(dp.Count)
						out[m.Name+"/"+typ.AsString()+"/"+st.AsString()+"/sum"] = dp.Sum
					}
				case metricdata.Gauge[int64]:
					for _, dp := range d.DataPoints {
						who, _ := dp.Attributes.Value(telemetry.AttrAgent)
						out[m.Name+"/"+who.AsString()] = float64(dp.Value)
					}
				}
			}
		}
		return out
	}
	got := collect()
	for k, want := range map[string]float64{
		telemetry.MetricTaskDuration + "/local_bash/completed/count": 2,
		telemetry.MetricTaskDuration + "/local_bash/completed/sum":   6,
		telemetry.MetricTaskDuration + "/remote_agent/failed/count":  1,
		telemetry.MetricInbox + "/ann":                               3,
		telemetry.MetricInbox + "/" + team.LeadName:                  0,
		telemetry.MetricTasksPending + "/":                           2,
		telemetry.MetricJobsPending + "/":                            1,
	} {
		if v, ok := got[k]; !ok || v != want {
			t.Errorf("%s = %v (%v); want %v", k, v, ok, want)
		}
	}
	unread = 0 // a gauge is read afresh at each collection
	if v := collect()[telemetry.MetricInbox+"/ann"]; v != 0 {
		t.Errorf("ann's inbox after it was read = %v; want 0", v)
	}

	// The same over OTLP/HTTP.
	recv := telemetrytest.New(t)
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL}
	otel, err := telemetry.Setup(t.Context(), func(k string) string { return env[k] }, "troupe", "test")
	if err != nil {
		t.Fatal(err)
	}
	otel.TaskEnded("local_agent", "completed", 1500*time.Millisecond)
	if err := otel.ObserveDepths(func(context.Context) telemetry.Depths {
		return telemetry.Depths{Inboxes: map[string]int64{"bob": 5}, Tasks: 4}
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := otel.Close(ctx); err != nil {
		t.Fatal(err)
	}
	seen := map[string]telemetrytest.Point{}
	for _, p := range recv.Points() {
		seen[p.Metric+"/"+p.Attrs[telemetry.AttrAgent]+p.Attrs[telemetry.AttrTaskType]] = p
	}
	if p := seen[telemetry.MetricTaskDuration+"/local_agent"]; p.Int != 1 || math.Abs(p.Double-1.5) > 1e-9 {
		t.Errorf("task duration over OTLP = %+v; want one of 1.5 s", p)
	}
	if p := seen[telemetry.MetricInbox+"/bob"]; p.Int != 5 {
		t.Errorf("bob's inbox over OTLP = %+v; want 5", p)
	}
	if p := seen[telemetry.MetricTasksPending+"/"]; p.Int != 4 {
		t.Errorf("pending tasks over OTLP = %+v; want 4", p)
	}
	if errs := recv.Errors(); len(errs) > 0 {
		t.Errorf("the receiver could not decode: %v", errs)
	}
}
