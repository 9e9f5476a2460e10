package telemetry

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/proto"
)

// Metric names and their attribute keys.
const (
	MetricTokens   = "troupe.tokens"   // tokens used, by agent, model and AttrTokenType
	MetricCost     = "troupe.cost"     // US dollars spent at list prices, by agent and model
	MetricMessages = "troupe.messages" // messages sent, by sending agent
	MetricClaims   = "troupe.claims"   // tasks claimed from the list, by agent

	AttrTokenType = "troupe.token.type" // input, output, cache_read, cache_write

	MetricTaskDuration = "troupe.task.duration" // seconds from a background task's start to its end, by AttrTaskType and AttrTaskStatus
	MetricInbox        = "troupe.queue.inbox"   // unread messages in an inbox, by agent (gauge)
	MetricTasksPending = "troupe.queue.tasks"   // pending tasks on the team's task list (gauge)
	MetricJobsPending  = "troupe.queue.jobs"    // remote jobs submitted and not started yet (gauge)

	AttrTaskType   = "troupe.task.type"   // local_bash, local_agent, remote_agent, in_process_teammate, ...
	AttrTaskStatus = "troupe.task.status" // completed, failed, killed
)

// DefaultMetricInterval is how often metrics are exported.
const DefaultMetricInterval = 30 * time.Second

// counters are the instruments of a Telemetry with metrics.
type counters struct {
	meter    metric.Meter
	tokens   metric.Int64Counter
	cost     metric.Float64Counter
	messages metric.Int64Counter
	claims   metric.Int64Counter
	taskDur  metric.Float64Histogram
}

func newCounters(mp metric.MeterProvider) (*counters, error) {
	m := mp.Meter("github.com/troupe-dev/troupe")
	c := counters{meter: m}
	var err error
	if c.tokens, err = m.Int64Counter(MetricTokens, metric.WithUnit("{token}"), metric.WithDescription("tokens used by model calls")); err != nil {
		return nil, err
	}
	if c.cost, err = m.Float64Counter(MetricCost, metric.WithUnit("USD"), metric.WithDescription("cost of model calls at list prices")); err != nil {
		return nil, err
	}
	if c.messages, err = m.Int64Counter(MetricMessages, metric.WithUnit("{message}"), metric.WithDescription("messages sent between agents")); err != nil {
		return nil, err
	}
	if c.claims, err = m.Int64Counter(MetricClaims, metric.WithUnit("{task}"), metric.WithDescription("tasks claimed from the team's list")); err != nil {
		return nil, err
	}
	if c.taskDur, err = m.Float64Histogram(MetricTaskDuration, metric.WithUnit("s"), metric.WithDescription("background task durations, start to end"),
		metric.WithExplicitBucketBoundaries(0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600)); err != nil {
		return nil, err
	}
	return &c, nil
}

// WithMeter records t's metrics into mp (tests give the SDK's manual
// reader); Setup does it with its OTLP exporter.
func (t *Telemetry) WithMeter(mp metric.MeterProvider) error {
	c, err := newCounters(mp)
	if err != nil {
		return fmt.Errorf("telemetry: metrics: %w", err)
	}
	t.counters = c
	return nil
}

// Metrics reports whether metrics are recorded.
func (t *Telemetry) Metrics() bool { return t != nil && t.counters != nil }

// TaskEnded records a background task's duration by its type and final
// status. It does nothing without metrics.
func (t *Telemetry) TaskEnded(taskType, status string, d time.Duration) {
	if !t.Metrics() {
		return
	}
	t.counters.taskDur.Record(context.Background(), d.Seconds(),
		metric.WithAttributes(attribute.String(AttrTaskType, taskType), attribute.String(AttrTaskStatus, status)))
}

// Depths are a team's queues at one moment.
type Depths struct {
	Inboxes map[string]int64 // unread messages by agent
	Tasks   int64            // pending tasks on the task list
	Jobs    int64            // remote jobs waiting for a worker
}

// ObserveDepths makes depths the source of the queue gauges, called at
// each export (it may do I/O; ctx bounds it). It does nothing without
// metrics.
func (t *Telemetry) ObserveDepths(depths func(ctx context.Context) Depths) error {
	if !t.Metrics() {
		return nil
	}
	m := t.counters.meter
	inbox, err := m.Int64ObservableGauge(MetricInbox, metric.WithUnit("{message}"), metric.WithDescription("unread messages in an agent's inbox"))
	if err != nil {
		return fmt.Errorf("telemetry: metrics: %w", err)
	}
	tasks, err := m.Int64ObservableGauge(MetricTasksPending, metric.WithUnit("{task}"), metric.WithDescription("pending tasks on the team's task list"))
	if err != nil {
		return fmt.Errorf("telemetry: metrics: %w", err)
	}
	jobs, err := m.Int64ObservableGauge(MetricJobsPending, metric.WithUnit("{job}"), metric.WithDescription("remote jobs submitted and not started"))
	if err != nil {
		return fmt.Errorf("telemetry: metrics: %w", err)
	}
	_, err = m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		d := depths(ctx)
		for name, n := range d.Inboxes {
			o.ObserveInt64(inbox, n, metric.WithAttributes(attribute.String(AttrAgent, name)))
		}
		o.ObserveInt64(tasks, d.Tasks)
		o.ObserveInt64(jobs, d.Jobs)
		return nil
	}, inbox, tasks, jobs)
	if err != nil {
		return fmt.Errorf("telemetry: metrics: %w", err)
	}
	return nil
}

// Spent records one model call of agent on model: its tokens by type
// and, when usd is not nil, its cost. It does nothing without metrics.
func (t *Telemetry) Spent(agentName, model string, input, output, cacheRead, cacheWrite int64, usd *float64) {
	if t == nil || t.counters == nil {
		return
	}
	ctx := context.Background()
	for _, n := range []struct {
		kind string
		v    int64
	}{{"input", input}, {"output", output}, {"cache_read", cacheRead}, {"cache_write", cacheWrite}} {
		if n.v > 0 {
			t.counters.tokens.Add(ctx, n.v, metric.WithAttributes(attribute.String(AttrAgent, agentName), attribute.String(AttrModel, model), attribute.String(AttrTokenType, n.kind)))
		}
	}
	if usd != nil {
		t.counters.cost.Add(ctx, *usd, metric.WithAttributes(attribute.String(AttrAgent, agentName), attribute.String(AttrModel, model)))
	}
}

// Claimed records a task the agent claimed from its team's list (what
// says which): a troupe.claim span where the agent is now, and the
// claims metric. It does nothing for a nil Agent.
func (a *Agent) Claimed(what string) {
	if a == nil {
		return
	}
	_, sp := a.o.t.tracer.Start(a.Context(), SpanClaim, trace.WithAttributes(attribute.String(AttrAgent, a.o.agent), attribute.String(AttrClaim, what)))
	sp.End()
	if a.o.t.counters != nil {
		a.o.t.counters.claims.Add(context.Background(), 1, metric.WithAttributes(attribute.String(AttrAgent, a.o.agent)))
	}
}

func (t *Telemetry) messageSent(from string) {
	if t == nil || t.counters == nil {
		return
	}
	t.counters.messages.Add(context.Background(), 1, metric.WithAttributes(attribute.String(AttrAgent, from)))
}

// otlpMetrics exports metrics over OTLP/HTTP (protobuf), cumulative sums
// only: the counters above.
type otlpMetrics struct {
	url     string
	client  *http.Client
	res     []*commonpb.KeyValue
	headers map[string]string
}

var _ sdkmetric.Exporter = (*otlpMetrics)(nil)

func (e *otlpMetrics) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}

func (e *otlpMetrics) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

func (e *otlpMetrics) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	req := &colmetricpb.ExportMetricsServiceRequest{ResourceMetrics: []*metricpb.ResourceMetrics{{
		Resource: &resourcepb.Resource{Attributes: e.res}}}}
	out := req.ResourceMetrics[0]
	for _, sm := range rm.ScopeMetrics {
		ps := &metricpb.ScopeMetrics{Scope: &commonpb.InstrumentationScope{Name: sm.Scope.Name, Version: sm.Scope.Version}}
		for _, m := range sm.Metrics {
			pm := &metricpb.Metric{Name: m.Name, Description: m.Description, Unit: m.Unit}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				pm.Data = &metricpb.Metric_Sum{Sum: sum(d, func(v int64) *metricpb.NumberDataPoint {
					return &metricpb.NumberDataPoint{Value: &metricpb.NumberDataPoint_AsInt{AsInt: v}}
				})}
			case metricdata.Sum[float64]:
				pm.Data = &metricpb.Metric_Sum{Sum: sum(d, func(v float64) *metricpb.NumberDataPoint {
					return &metricpb.NumberDataPoint{Value: &metricpb.NumberDataPoint_AsDouble{AsDouble: v}}
				})}
			case metricdata.Gauge[int64]:
				g := &metricpb.Gauge{}
				for _, dp := range d.DataPoints {
					p := &metricpb.NumberDataPoint{Value: &metricpb.NumberDataPoint_AsInt{AsInt: dp.Value},
						StartTimeUnixNano: uint64(dp.StartTime.UnixNano()), TimeUnixNano: uint64(dp.Time.UnixNano()), Attributes: attrs(dp.Attributes)}
					g.DataPoints = append(g.DataPoints, p)
				}
				pm.Data = &metricpb.Metric_Gauge{Gauge: g}
			case metricdata.Histogram[float64]:
				pm.Data = &metricpb.Metric_Histogram{Histogram: histogram(d)}
			default:
				continue // troupe records sums, gauges and histograms only
			}
			ps.Metrics = append(ps.Metrics, pm)
		}
		out.ScopeMetrics = append(out.ScopeMetrics, ps)
	}
	body, err := proto.Marshal(req)
	if err != nil {
		return fmt.Errorf("telemetry: encode metrics: %w", err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("telemetry: export metrics: %w", err)
	}
	hr.Header.Set("Content-Type", "application/x-protobuf")
	for k, v := range e.headers {
		hr.Header.Set(k, v)
	}
	res, err := e.client.Do(hr)
	if err != nil {
		return fmt.Errorf("telemetry: export metrics: %w", err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("telemetry: export metrics: %s answered %s", e.url, res.Status)
	}
	return nil
}

func attrs(set attribute.Set) []*commonpb.KeyValue {
	var out []*commonpb.KeyValue
	for _, kv := range set.ToSlice() {
		out = append(out, &commonpb.KeyValue{Key: string(kv.Key),
			Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: kv.Value.String()}}})
	}
	return out
}

func histogram(d metricdata.Histogram[float64]) *metricpb.Histogram {
	h := &metricpb.Histogram{AggregationTemporality: metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE}
	if d.Temporality == metricdata.DeltaTemporality {
		h.AggregationTemporality = metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA
	}
	for _, dp := range d.DataPoints {
		sum := dp.Sum
		p := &metricpb.HistogramDataPoint{StartTimeUnixNano: uint64(dp.StartTime.UnixNano()), TimeUnixNano: uint64(dp.Time.UnixNano()),
			Count: dp.Count, Sum: &sum, ExplicitBounds: dp.Bounds, BucketCounts: dp.BucketCounts, Attributes: attrs(dp.Attributes)}
		if v, ok := dp.Min.Value(); ok {
			p.Min = &v
		}
		if v, ok := dp.Max.Value(); ok {
			p.Max = &v
		}
		h.DataPoints = append(h.DataPoints, p)
	}
	return h
}

func sum[N int64 | float64](d metricdata.Sum[N], point func(N) *metricpb.NumberDataPoint) *metricpb.Sum {
	s := &metricpb.Sum{IsMonotonic: d.IsMonotonic, AggregationTemporality: metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE}
	if d.Temporality == metricdata.DeltaTemporality {
		s.AggregationTemporality = metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA
	}
	for _, dp := range d.DataPoints {
		p := point(dp.Value)
		p.StartTimeUnixNano, p.TimeUnixNano = uint64(dp.StartTime.UnixNano()), uint64(dp.Time.UnixNano())
		for _, kv := range dp.Attributes.ToSlice() {
			p.Attributes = append(p.Attributes, &commonpb.KeyValue{Key: string(kv.Key),
				Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: kv.Value.String()}}})
		}
		s.DataPoints = append(s.DataPoints, p)
	}
	return s
}

func (e *otlpMetrics) ForceFlush(context.Context) error { return nil }
func (e *otlpMetrics) Shutdown(context.Context) error   { return nil }

// otlpHeaders reads OTEL_EXPORTER_OTLP_METRICS_HEADERS, else
// OTEL_EXPORTER_OTLP_HEADERS: "k=v,k2=v2".
func otlpHeaders(getenv func(string) string) map[string]string {
	raw := getenv("OTEL_EXPORTER_OTLP_METRICS_HEADERS")
	if raw == "" {
		raw = getenv("OTEL_EXPORTER_OTLP_HEADERS")
	}
	out := map[string]string{}
	for _, kv := range strings.Split(raw, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k != "" {
			out[k] = v
		}
	}
	return out
}

// setupMetrics starts the metrics of t when an OTLP endpoint for them is
// set (OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, else
// OTEL_EXPORTER_OTLP_ENDPOINT with "/v1/metrics"), exported every
// interval and at Close.
func (t *Telemetry) setupMetrics(getenv func(string) string, service, version string, interval time.Duration) error {
	url := getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
	if url == "" {
		base := getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
		if base == "" {
			return nil
		}
		url = strings.TrimSuffix(base, "/") + "/v1/metrics"
	}
	str := func(k, v string) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
	}
	exp := &otlpMetrics{url: url, client: &http.Client{Timeout: 10 * time.Second}, headers: otlpHeaders(getenv),
		res: []*commonpb.KeyValue{str("service.name", service), str("service.version", version)}}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(interval))))
	c, err := newCounters(mp)
	if err != nil {
		return fmt.Errorf("telemetry: metrics: %w", err)
	}
	t.counters, t.mshutdown = c, mp.Shutdown
	return nil
}
