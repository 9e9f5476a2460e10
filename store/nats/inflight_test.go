package nats_test

import (
	"context"
	"errors"
	"testing"
	"time"

	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// TestCommandInFlightAcrossRestart stops the server while commands are in
// flight and brings it back within their deadline: each retries and
// succeeds instead of failing at the deadline.
func TestCommandInFlightAcrossRestart(t *testing.T) {
	srv := startServer(t, "")
	s := srv.open(t, natsstore.Options{Namespace: "inflight", MaxReconnectWait: 100 * time.Millisecond})
	ctx := t.Context()
	newCrew(t, s)
	l := tasklist.New(s.Tasks(), "crew")
	for range 3 {
		if _, err := l.Create(ctx, tasklist.Draft{Subject: "work"}); err != nil {
			t.Fatal(err)
		}
	}

	ops := []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"Teams.Get", func(ctx context.Context) error { _, err := s.Teams().Get(ctx, "crew"); return err }},
		{"Tasks.List", func(ctx context.Context) error { _, err := s.Tasks().List(ctx, "crew"); return err }},
		{"List.Claim", func(ctx context.Context) error { _, err := l.Claim(ctx, "alice"); return err }},
		{"List.Create", func(ctx context.Context) error {
			_, err := l.Create(ctx, tasklist.Draft{Subject: "during the restart"})
			return err
		}},
		{"team.SetActive", func(ctx context.Context) error { return team.SetActive(ctx, s.Teams(), "crew", "bob", false) }},
	}
	// Each read runs in a loop so that some request is in flight, sent but
	// unanswered, when the server goes; the writes start during the outage.
	stopLoops := make(chan struct{})
	errs := make(chan error, len(ops)+2)
	for _, op := range ops[:2] {
		go func() {
			for {
				select {
				case <-stopLoops:
					errs <- nil
					return
				default:
				}
				if err := op.run(ctx); err != nil {
					errs <- errors.New(op.name + ": " + err.Error())
					return
				}
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	srv.stop()
	for _, op := range ops[2:] {
		go func() {
			err := op.run(ctx)
			if err != nil {
				err = errors.New(op.name + ": " + err.Error())
			}
			errs <- err
		}()
	}
	time.Sleep(700 * time.Millisecond)
	srv.start(t)
	time.Sleep(200 * time.Millisecond)
	close(stopLoops)
	for range ops {
		if err := <-errs; err != nil {
			t.Errorf("after a 0.7 s restart: %v; want success within the request deadline", err)
		}
	}
	t.Logf("all commands done %v after the stop", time.Since(start).Round(time.Millisecond))
	tasks, err := l.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 4 {
		t.Errorf("%d tasks after the restart; want 4 (the create during it once)", len(tasks))
	}
	claimed := 0
	for _, x := range tasks {
		if x.Owner == "alice" {
			claimed++
		}
	}
	if claimed != 1 {
		t.Errorf("alice owns %d tasks; want 1 (one claim)", claimed)
	}
}
