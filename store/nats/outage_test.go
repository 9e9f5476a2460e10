package nats_test

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	natsstore "github.com/troupe-dev/troupe/store/nats"
)

// A send and a read started during a 40 s outage (longer than SendTimeout
// and RequestTimeout) wait for the server instead of failing, and complete
// once it is back on the same port and folder; the wait is logged.
func TestCommandsWaitOutALongOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a 40 s outage")
	}
	srv := startServer(t, "")
	logs := &lockedBuffer{}
	s := srv.open(t, natsstore.Options{
		Namespace:        "outage",
		MaxReconnectWait: 200 * time.Millisecond,
		Logger:           slog.New(slog.NewTextHandler(io.MultiWriter(t.Output(), logs), &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	newCrew(t, s)
	srv.stop()
	ctx := t.Context() // no deadline: the session's own, or Ctrl-C, would end it
	sent := make(chan error, 1)
	read := make(chan error, 1)
	go func() {
		_, err := s.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: "through the outage"})
		sent <- err
	}()
	go func() {
		_, err := s.Teams().Get(ctx, "crew")
		read <- err
	}()
	const outage = 40 * time.Second // over SendTimeout (30 s) and RequestTimeout (10 s)
	select {
	case err := <-sent:
		t.Fatalf("Send during the outage returned %v; want it to wait", err)
	case err := <-read:
		t.Fatalf("Get during the outage returned %v; want it to wait", err)
	case <-time.After(outage):
	}
	if !strings.Contains(logs.String(), "waiting for the store") {
		t.Errorf("the outage is not logged as waiting for the store:\n%s", logs.String())
	}
	srv.start(t)
	for name, ch := range map[string]chan error{"Send": sent, "Get": read} {
		select {
		case err := <-ch:
			if err != nil {
				t.Errorf("%s after the outage: %v", name, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s did not complete within a minute of the server's return", name)
		}
	}
	got, err := s.Mail().Read(ctx, "crew", "bob", false)
	if err != nil || len(got) != 1 || got[0].Text != "through the outage" {
		t.Errorf("Read(bob) = %v, %v; want the one message", got, err)
	}
	if !strings.Contains(logs.String(), "the store is back") {
		t.Errorf("the reconnection is not logged:\n%s", logs.String())
	}
}
