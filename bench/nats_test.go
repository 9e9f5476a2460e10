package bench

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// startNATS starts an in-process JetStream server on a free loopback port
// for t and returns its URL.
func startNATS(t *testing.T) (*server.Server, string) {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		t.Fatal("NATS server not ready within 10s")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s, fmt.Sprintf("nats://127.0.0.1:%d", s.Addr().(*net.TCPAddr).Port)
}

// TestScenariosOnNATS runs the mailbox and claim scenarios on a NATS
// server: the children open the NATS store, nothing is lost, duplicated or
// claimed twice, and each run's namespace is gone afterwards.
func TestScenariosOnNATS(t *testing.T) {
	srv, url := startNATS(t)
	r := testRunner(t)
	r.NATS = url
	ctx := t.Context()

	w, err := r.Writers(ctx, WritersConfig{Writers: 2, Msgs: 10, Preload: 5})
	if err != nil {
		t.Fatalf("Writers on NATS = %v", err)
	}
	if w.OK != 20 || !w.Verify.Clean() || w.Verify.Stored != 25 || w.InvalidInbox != "" {
		t.Errorf("Writers on NATS: %d ok, check %+v, invalid %q; want 20 ok and 25 stored, clean (first error %q)", w.OK, w.Verify, w.InvalidInbox, w.FirstError)
	}
	d, err := r.Delivery(ctx, DeliveryConfig{N: 5, Preload: 3, GapMin: 5 * time.Millisecond, GapMax: 20 * time.Millisecond, Settle: 5 * time.Second})
	if err != nil {
		t.Fatalf("Delivery on NATS = %v", err)
	}
	if d.Sent != 5 || d.Missing != 0 || d.Latency.N != 5 || d.Latency.Min <= 0 {
		t.Errorf("Delivery on NATS: sent %d, missing %d, latency %+v; want 5 seen, from the call so positive (first error %q)", d.Sent, d.Missing, d.Latency, d.FirstError)
	}
	race, err := r.Race(ctx, RaceConfig{Agents: 2, Rounds: 3})
	if err != nil {
		t.Fatalf("Race on NATS = %v", err)
	}
	if race.Violations != 0 || race.Outcomes[outWon] != 3 {
		t.Errorf("Race on NATS: %d violations, outcomes %v; want one winner a round", race.Violations, race.Outcomes)
	}
	drain, err := r.Drain(ctx, DrainConfig{Agents: 2, Tasks: 10})
	if err != nil {
		t.Fatalf("Drain on NATS = %v", err)
	}
	if drain.Claims != 10 || drain.DoubleClaims != 0 || drain.Completed != 10 {
		t.Errorf("Drain on NATS: %d claims, %d double, %d completed; want 10 claimed once and completed (%v)", drain.Claims, drain.DoubleClaims, drain.Completed, drain.Examples)
	}

	jsz, err := srv.Jsz(&server.JSzOptions{Streams: true, Accounts: true})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, a := range jsz.AccountDetails {
		for _, st := range a.Streams {
			if strings.Contains(st.Name, "bench-") {
				left = append(left, st.Name)
			}
		}
	}
	if len(left) > 0 {
		t.Errorf("streams left on the server after the runs: %v; want every run's namespace deleted", left)
	}
}

func TestInteropRefusesNATS(t *testing.T) {
	r := testRunner(t)
	r.NATS = "nats://127.0.0.1:1"
	if _, err := r.Interop(t.Context(), &Peer{}, InteropConfig{Troupe: 1, Node: 1, Msgs: 1, Mode: PeerLegacy}); err == nil || !strings.Contains(err.Error(), "file store only") {
		t.Errorf("Interop on NATS = %v; want a refusal", err)
	}
}
