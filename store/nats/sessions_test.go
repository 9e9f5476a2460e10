package nats_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/peer"
	natsstore "github.com/troupe-dev/troupe/store/nats"
)

func TestSessionsRegistryAndBridge(t *testing.T) {
	ts := startServer(t, "")
	a := ts.open(t, natsstore.Options{Namespace: "ns1"}).Sessions()
	b := ts.open(t, natsstore.Options{Namespace: "ns1"}).Sessions()
	other := ts.open(t, natsstore.Options{Namespace: "ns2"}).Sessions()
	ea := peer.Entry{ID: "sess-a", Name: "alpha", Host: "h1", Kind: peer.KindPrint, Started: time.Unix(1, 0).UTC(), Peers: true}
	eb := peer.Entry{ID: "sess-b", Name: "beta", Host: "h2", Kind: peer.KindInteractive, Started: time.Unix(2, 0).UTC(), Peers: true}
	if err := a.Publish(t.Context(), ea); err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(t.Context(), eb); err != nil {
		t.Fatal(err)
	}
	got, err := a.List(t.Context())
	if err != nil || len(got) != 2 || got[0].ID != "sess-a" || got[1].Name != "beta" {
		t.Fatalf("List = %+v, %v; want alpha and beta", got, err)
	}
	if got, _ := other.List(t.Context()); len(got) != 0 {
		t.Fatalf("another namespace lists %+v", got)
	}

	in := make(chan peer.Message, 1)
	stop, err := b.ServeBridge("sess-b", func(m peer.Message) error { in <- m; return nil })
	if err != nil {
		t.Fatal(err)
	}
	m := peer.Message{From: "alpha", Host: "h1", Session: "sess-a", To: "sess-b", Text: "hi from h1"}
	if err := a.SendBridge(t.Context(), "sess-b", m); err != nil {
		t.Fatalf("SendBridge = %v", err)
	}
	if got := <-in; got.Text != m.Text || got.Session != "sess-a" {
		t.Fatalf("delivered %+v", got)
	}
	if err := other.SendBridge(t.Context(), "sess-b", m); !errors.Is(err, peer.ErrNotFound) {
		t.Fatalf("SendBridge from another namespace = %v; want ErrNotFound", err)
	}
	m.To = "sess-c"
	if err := a.SendBridge(t.Context(), "sess-b", m); !errors.Is(err, peer.ErrRefused) || !strings.Contains(err.Error(), "another session") {
		t.Fatalf("SendBridge of a misaddressed message = %v; want refused", err)
	}
	stop()
	m.To = "sess-b"
	if err := a.SendBridge(t.Context(), "sess-b", m); !errors.Is(err, peer.ErrNotFound) {
		t.Fatalf("SendBridge after stop = %v; want ErrNotFound", err)
	}
	if err := b.Remove(t.Context(), "sess-b"); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.List(t.Context()); len(got) != 1 {
		t.Fatalf("List after Remove = %+v", got)
	}
}

// An entry not published again within its TTL is gone.
func TestSessionsTTL(t *testing.T) {
	ts := startServer(t, "")
	s := ts.open(t, natsstore.Options{}).Sessions()
	s.SetTTL(time.Second)
	if err := s.Publish(t.Context(), peer.Entry{ID: "x", Name: "x"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		got, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("entry still listed after its TTL: %+v", got)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// BenchmarkBridgeSend measures one message over the bridge (request and
// reply through the server) between two connections; it reports p50 and
// p99.
func BenchmarkBridgeSend(b *testing.B) {
	ts := startServer(b, "")
	a := ts.open(b, natsstore.Options{Namespace: "bench"}).Sessions()
	r := ts.open(b, natsstore.Options{Namespace: "bench"}).Sessions()
	stop, err := r.ServeBridge("sess-r", func(peer.Message) error { return nil })
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	m := peer.Message{From: "a", Host: "h", Session: "sess-a", To: "sess-r", Text: "ping"}
	ctx := context.Background()
	var lat []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := a.SendBridge(ctx, "sess-r", m); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
}
