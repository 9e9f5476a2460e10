package dashboard_test

import (
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/troupe-dev/troupe/dashboard"
	"github.com/troupe-dev/troupe/mailbox"
	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// TestEventStreamNATS runs the live stream over the NATS store: a message
// and a task written through another connection reach the stream through
// JetStream's pushes.
func TestEventStreamNATS(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		t.Fatal("nats server not ready within 30 s")
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	url := fmt.Sprintf("nats://127.0.0.1:%d", ns.Addr().(*net.TCPAddr).Port)
	open := func() *natsstore.Store {
		s, err := natsstore.Open(t.Context(), url, natsstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	dash, other := open(), open()
	ctx := t.Context()
	if _, err := team.Create(ctx, other.Teams(), team.CreateOptions{Name: "alpha", Cwd: "/", Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	if _, err := team.AddMember(ctx, other.Teams(), "alpha", team.Member{Name: "alice", AgentID: "alice@alpha", Cwd: "/"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	s, err := dashboard.New(dashboard.Config{Teams: dash.Teams(), Mail: dash.Mail(), Tasks: dash.Tasks()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })

	next := stream(t, srv.URL+"/team/alpha/events")
	if first := next(); !strings.Contains(first, `data-name="alice"`) {
		t.Fatalf("first event lacks the roster:\n%s", first)
	}
	if _, err := other.Mail().Send(ctx, "alpha", "alice", mailbox.Message{From: "team-lead", Text: "over nats"}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, next, "over nats")
	if _, err := tasklist.New(other.Tasks(), "alpha").Create(ctx, tasklist.Draft{Subject: "ship it"}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, next, "ship it")
}

// waitEvent reads events until one contains want.
func waitEvent(t *testing.T, next func() string, want string) {
	t.Helper()
	for range 20 {
		if strings.Contains(next(), want) {
			return
		}
	}
	t.Fatalf("no event with %q", want)
}
