package telemetry_test

import (
	"context"
	"math"
	"testing"
	"time"

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
