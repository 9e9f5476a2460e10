package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/troupe-dev/troupe/bench"
)

// TestBenchOnNATS: with --store nats://... the bench measures that server
// (its report says so), and options it cannot honour are refused rather
// than silently measuring the file store.
func TestBenchOnNATS(t *testing.T) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS server not ready")
	}
	defer srv.Shutdown()
	url := fmt.Sprintf("nats://127.0.0.1:%d", srv.Addr().(*net.TCPAddr).Port)

	r := runBench(t, nil, "--json", "--store", url, "mailbox", "--writers", "2", "--msgs", "3", "--preload", "4", "--tmp", t.TempDir())
	if r.err != nil {
		t.Fatalf("bench mailbox --store %s: %v\nstderr:\n%s", url, r.err, r.stderr)
	}
	var rep bench.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("no JSON report: %v\n%s", err, r.stdout)
	}
	if rep.Store != url || len(rep.Writers) != 1 || rep.Writers[0].OK != 6 || rep.Writers[0].Verify.Stored != 10 || !rep.Writers[0].Verify.Clean() {
		t.Errorf("report store %q, writers %+v; want %s with 6 sends into an inbox of 10, clean", rep.Store, rep.Writers, url)
	}

	// The same from $TROUPE_STORE, for the claim benchmarks.
	r = runBench(t, map[string]string{"TROUPE_STORE": url}, "claim", "--agents", "2", "--rounds", "2", "--drain-agents", "2", "--drain-tasks", "4", "--tmp", t.TempDir())
	if r.err != nil || !strings.Contains(r.stdout, "Store: "+url) {
		t.Errorf("bench claim with $TROUPE_STORE=%s: %v; want a run on it\n%s\nstderr:\n%s", url, r.err, r.stdout, r.stderr)
	}

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"token", []string{"--store", url, "--nats-token", "x", "mailbox"}, "credentials"},
		{"namespace", []string{"--store", url, "--nats-namespace", "mine", "claim"}, "namespace"},
		{"not a store", []string{"--store", "postgres://db", "mailbox"}, "not a NATS URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runBench(t, nil, tt.args...)
			var ue *UsageError
			if !errors.As(r.err, &ue) || !strings.Contains(r.err.Error(), tt.want) {
				t.Errorf("bench %s = %v; want a usage error about %s", strings.Join(tt.args, " "), r.err, tt.want)
			}
		})
	}
	r = runBench(t, nil, "--store", url, "mailbox", "--writers", "0", "--interop", "1", "--peer-bench", t.TempDir(), "--tmp", t.TempDir())
	if r.err == nil || !strings.Contains(r.err.Error(), "file store only") {
		t.Errorf("bench mailbox --interop on NATS = %v; want it refused", r.err)
	}
}
