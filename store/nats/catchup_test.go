package nats

import (
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// TestInboxFromLeader: a read that a replica answered without the newest
// messages is completed from the stream's leader, in order, skipping other
// inboxes' messages and messages deleted since; a replica further behind
// than leaderCatchUp messages makes the read start over (errStalled).
func TestInboxFromLeader(t *testing.T) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		t.Fatal("server not ready")
	}
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	s, err := Open(t.Context(), fmt.Sprintf("nats://127.0.0.1:%d", srv.Addr().(*net.TCPAddr).Port), Options{Namespace: "catchup"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	var bob []uint64
	for i := range 6 {
		for _, who := range []string{"bob", "amy"} {
			ack, err := s.js.Publish(ctx, s.inboxSubject("crew", who)+fmt.Sprintf(".m%d", i), []byte(fmt.Sprintf("%s %d", who, i)))
			if err != nil {
				t.Fatal(err)
			}
			if who == "bob" {
				bob = append(bob, ack.Sequence)
			}
		}
	}
	if err := s.mail.DeleteMsg(ctx, bob[3]); err != nil {
		t.Fatal(err)
	}
	last := bob[5]
	all, err := s.scanInboxDirect(ctx, "crew", "bob")
	if err != nil {
		t.Fatal(err)
	}
	for _, have := range []int{0, 1, 3, 4} { // as a replica behind by 4, 3, 2 or 1 message(s) answered
		got, err := s.inboxFromLeader(ctx, "crew", "bob", all[:have:have], last)
		if err != nil {
			t.Fatalf("from %d messages: %v", have, err)
		}
		var seqs []uint64
		for _, m := range got {
			if want := fmt.Sprintf("bob %d", indexOf(bob, m.seq)); string(m.data) != want || m.subject != s.inboxSubject("crew", "bob")+fmt.Sprintf(".m%d", indexOf(bob, m.seq)) {
				t.Errorf("from %d messages: message %d is %q on %s; want %q", have, m.seq, m.data, m.subject, want)
			}
			seqs = append(seqs, m.seq)
		}
		if want := []uint64{bob[0], bob[1], bob[2], bob[4], bob[5]}; fmt.Sprint(seqs) != fmt.Sprint(want) {
			t.Errorf("from %d messages: sequences %v; want %v (the deleted one skipped)", have, seqs, want)
		}
	}

	// Further behind than leaderCatchUp: start over.
	for i := range leaderCatchUp + 1 {
		ack, err := s.js.Publish(ctx, s.inboxSubject("crew", "bob")+fmt.Sprintf(".n%d", i), []byte("more"))
		if err != nil {
			t.Fatal(err)
		}
		last = ack.Sequence
	}
	if _, err := s.inboxFromLeader(ctx, "crew", "bob", all, last); !errors.Is(err, errStalled) {
		t.Errorf("behind by %d messages: %v; want errStalled", leaderCatchUp+1, err)
	}
}

func indexOf(seqs []uint64, seq uint64) int {
	for i, s := range seqs {
		if s == seq {
			return i
		}
	}
	return -1
}
