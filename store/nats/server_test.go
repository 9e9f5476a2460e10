package nats_test

import (
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	natsstore "github.com/troupe-dev/troupe/store/nats"
)

// testServer is an in-process NATS server with JetStream in a temporary
// folder, on a random loopback port.
type testServer struct {
	*server.Server
	dir   string
	token string
	port  int
	// syncAlways flushes JetStream to disk after every write.
	syncAlways bool
}

// startServer starts a server for t, shut down when t ends.
func startServer(t testing.TB, token string) *testServer {
	t.Helper()
	ts := &testServer{dir: t.TempDir(), token: token, port: -1}
	ts.start(t)
	t.Cleanup(func() { ts.stop() })
	return ts
}

func (ts *testServer) start(t testing.TB) {
	t.Helper()
	opts := &server.Options{
		Host:          "127.0.0.1",
		Port:          ts.port,
		JetStream:     true,
		StoreDir:      ts.dir,
		NoLog:         true,
		NoSigs:        true,
		Authorization: ts.token,
		SyncAlways:    ts.syncAlways,
	}
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("start nats server: %v", err)
	}
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		s.Shutdown()
		t.Fatal("nats server not ready within 30s")
	}
	ts.Server = s
	ts.port = s.Addr().(*net.TCPAddr).Port
}

// stop shuts the server down and waits for it.
func (ts *testServer) stop() {
	if ts.Server != nil {
		ts.Shutdown()
		ts.WaitForShutdown()
	}
}

// restart stops the server and starts it again on the same port and
// JetStream folder.
func (ts *testServer) restart(t testing.TB) {
	t.Helper()
	ts.stop()
	ts.start(t)
}

func (ts *testServer) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", ts.port) }

var namespaces atomic.Int64

// open returns a store in a fresh namespace of ts, closed when t ends.
func (ts *testServer) open(t testing.TB, opts natsstore.Options) *natsstore.Store {
	t.Helper()
	if opts.Namespace == "" {
		opts.Namespace = fmt.Sprintf("t%d", namespaces.Add(1))
	}
	if opts.Token == "" {
		opts.Token = ts.token
	}
	s, err := natsstore.Open(t.Context(), ts.url(), opts)
	if err != nil {
		t.Fatalf("Open(%s) error: %v", ts.url(), err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
