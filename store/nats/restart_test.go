package nats_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/logtest"
	"github.com/troupe-dev/troupe/mailbox"
	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/team"
)

var testNow = time.Date(2026, 12, 2, 13, 13, 36, 0, time.UTC)

// newCrew creates team "crew" with alice and bob in s.
func newCrew(t testing.TB, s *natsstore.Store) {
	t.Helper()
	if _, err := team.Create(t.Context(), s.Teams(), team.CreateOptions{Name: "crew", Now: testNow, Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"alice", "bob"} {
		if _, err := team.AddMember(t.Context(), s.Teams(), "crew", team.Member{Name: n}, testNow); err != nil {
			t.Fatal(err)
		}
	}
}

// TestServerRestartMidExchange restarts the server (same JetStream folder
// and port) while a sender is sending: every acknowledged message is in
// the inbox exactly once and in order, and a watch started before the
// restart still kicks for messages sent after it.
func TestServerRestartMidExchange(t *testing.T) {
	srv := startServer(t, "")
	logs := &lockedBuffer{}
	opts := natsstore.Options{
		Namespace:        "restart",
		SendTimeout:      2 * time.Minute,
		MaxReconnectWait: 200 * time.Millisecond,
		Logger:           slog.New(slog.NewTextHandler(io.MultiWriter(t.Output(), logs), &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	sender := srv.open(t, opts)
	reader := srv.open(t, opts)
	newCrew(t, sender)
	ctx := t.Context()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	kicks, err := reader.Mail().Watch(wctx, "crew", "bob")
	if err != nil {
		t.Fatal(err)
	}

	const total = 120
	var acked atomic.Int64
	sendErr := make(chan error, 1)
	ids := make([]string, total)
	go func() {
		for i := range total {
			d, err := sender.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: fmt.Sprint(i)})
			if err != nil {
				sendErr <- fmt.Errorf("Send #%d: %w", i, err)
				return
			}
			ids[i] = d[0].ID
			acked.Add(1)
		}
		sendErr <- nil
	}()
	// Restart once a third is acknowledged: the sender is mid-stream.
	deadline := time.Now().Add(time.Minute)
	for acked.Load() < total/3 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d sends acknowledged within a minute", acked.Load())
		}
		time.Sleep(time.Millisecond)
	}
	srv.restart(t)
	if err := <-sendErr; err != nil {
		t.Fatalf("%v (after the restart; want every send to succeed)", err)
	}
	got, err := reader.Mail().Read(ctx, "crew", "bob", false)
	if err != nil {
		t.Fatalf("Read(bob) error: %v", err)
	}
	for _, want := range []string{"disconnected; reconnecting", "reconnected"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log after a restart has no %q line:\n%s", want, logs.String())
		}
	}
	if len(got) != total {
		t.Errorf("Read(bob) = %d messages; want %d (lost or duplicated)", len(got), total)
	}
	for i, m := range got {
		if i < total && (m.Text != fmt.Sprint(i) || m.ID != ids[i]) {
			t.Fatalf("message %d = {%q, %s}; want {%q, %s}: lost, duplicated or reordered", i, m.Text, m.ID, fmt.Sprint(i), ids[i])
		}
	}

	// Drain kicks, then one more send must kick the pre-restart watch.
	for drained := false; !drained; {
		select {
		case <-kicks:
		default:
			drained = true
		}
	}
	d, err := sender.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: "after"})
	if err != nil {
		t.Fatal(err)
	}
	timeout := time.After(30 * time.Second)
	for seen := false; !seen; {
		select {
		case _, ok := <-kicks:
			if !ok {
				t.Fatal("watch closed after the restart")
			}
			msgs, err := reader.Mail().Read(ctx, "crew", "bob", true)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				seen = seen || m.ID == d[0].ID
			}
		case <-timeout:
			t.Fatal("no kick within 30s for a message sent after the restart")
		}
	}
}

// lockedBuffer is a buffer safe for concurrent writers (a logger's).
type lockedBuffer = logtest.Buffer
