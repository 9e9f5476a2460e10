package nats

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/troupe-dev/troupe/internal/logtest"
)

// openInternal starts an embedded NATS server with JetStream for t and
// opens a store on it with opts; both end with t.
func openInternal(t *testing.T, opts Options) *Store {
	t.Helper()
	port := startEmbedded(t, &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	s, err := Open(t.Context(), fmt.Sprintf("nats://127.0.0.1:%d", port), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// startEmbedded starts an embedded NATS server with opts for t, waits
// until it takes connections, and returns its client port; it is shut
// down when t ends.
func startEmbedded(t testing.TB, opts *server.Options) int {
	t.Helper()
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		t.Fatal("server not ready")
	}
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	return srv.Addr().(*net.TCPAddr).Port
}

// lockedBuffer collects a logger's output.
type lockedBuffer = logtest.Buffer
