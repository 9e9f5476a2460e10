// Package telemetrytest is an in-process OTLP/HTTP trace receiver for
// tests: point OTEL_EXPORTER_OTLP_ENDPOINT at a Receiver and read the
// spans every exporting process sent it.
package telemetrytest

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span.
type Span struct {
	Name     string
	TraceID  string // hex
	SpanID   string // hex
	ParentID string // hex, "" for a root
	Attrs    map[string]string
	Header   http.Header // of the request that brought it (OTEL_EXPORTER_OTLP_HEADERS)
}

// Point is one received data point: of a sum or a gauge (Int or
// Double), or of a histogram (Int its count, Double its sum).
type Point struct {
	Metric string
	Attrs  map[string]string
	Int    int64
	Double float64
}

// Receiver collects the spans posted to /v1/traces and the sums, gauges
// and histograms posted to /v1/metrics. It is safe for concurrent use.
type Receiver struct {
	URL string // the endpoint, for OTEL_EXPORTER_OTLP_ENDPOINT

	mu     sync.Mutex
	spans  []Span  // guarded by mu
	points []Point // guarded by mu
	bad    []error
}

// New starts a Receiver, closed when t ends.
func New(t testing.TB) *Receiver {
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path == "/v1/metrics" {
		r.metrics(w, req)
		return
	}
	if req.URL.Path != "/v1/traces" {
		http.NotFound(w, req)
		return
	}
	b, err := io.ReadAll(req.Body)
	var msg coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(b, &msg)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.bad = append(r.bad, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, rs := range msg.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				sp := Span{Name: s.Name, TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
					ParentID: hex.EncodeToString(s.ParentSpanId), Attrs: map[string]string{}, Header: req.Header.Clone()}
				for _, kv := range s.Attributes {
					if v := kv.Value.GetStringValue(); v != "" {
						sp.Attrs[kv.Key] = v
					}
				}
				r.spans = append(r.spans, sp)
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Errors returns the bodies that did not decode.
func (r *Receiver) Errors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.bad...)
}

func (r *Receiver) metrics(w http.ResponseWriter, req *http.Request) {
	b, err := io.ReadAll(req.Body)
	var msg colmetricpb.ExportMetricsServiceRequest
	if err == nil {
		err = proto.Unmarshal(b, &msg)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.bad = append(r.bad, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, rm := range msg.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				for _, dp := range append(m.GetSum().GetDataPoints(), m.GetGauge().GetDataPoints()...) {
					p := Point{Metric: m.Name, Attrs: map[string]string{}, Int: dp.GetAsInt(), Double: dp.GetAsDouble()}
					for _, kv := range dp.Attributes {
						p.Attrs[kv.Key] = kv.Value.GetStringValue()
					}
					r.points = append(r.points, p)
				}
				for _, dp := range m.GetHistogram().GetDataPoints() {
					p := Point{Metric: m.Name, Attrs: map[string]string{}, Int: int64(dp.GetCount()), Double: dp.GetSum()}
					for _, kv := range dp.Attributes {
						p.Attrs[kv.Key] = kv.Value.GetStringValue()
					}
					r.points = append(r.points, p)
				}
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&colmetricpb.ExportMetricsServiceResponse{})
	_, _ = w.Write(out)
}

// Points returns the metric data points received so far (each export
// repeats the cumulative sums: the last point of a series is its total).
func (r *Receiver) Points() []Point {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Point(nil), r.points...)
}
