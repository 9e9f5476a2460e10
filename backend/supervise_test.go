package backend_test

import (
	"context"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/backend"
)

// A kick makes Supervise check at once (the interval is an hour), Kick
// never blocks, and the loop returns when its ctx ends.
func TestSuperviseKick(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	kick := make(chan struct{}, 1)
	checks := make(chan struct{}, 10)
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		backend.Supervise(ctx, time.Hour, kick, func(context.Context) { checks <- struct{}{} })
	}()
	for range 3 {
		backend.Kick(kick)
		backend.Kick(kick) // a kick already pending: must not block
		select {
		case <-checks:
		case <-time.After(10 * time.Second):
			t.Fatal("no check within 10s of a kick")
		}
	}
	cancel()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("Supervise still runs 10s after its ctx ended")
	}
}
