package backend

import (
	"context"
	"time"
)

// Supervise is the loop of a pane backend's supervisor: it calls check
// every interval, and at once when kick receives, until ctx ends. Kick
// asks it to check now.
func Supervise(ctx context.Context, every time.Duration, kick <-chan struct{}, check func(context.Context)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-kick:
		}
		check(ctx)
	}
}

// Kick asks the Supervise loop reading kick (a channel with a buffer of
// one) to check now. It never blocks: a check already asked for is not
// asked twice.
func Kick(kick chan<- struct{}) {
	select {
	case kick <- struct{}{}:
	default:
	}
}
