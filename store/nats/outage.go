package nats

import (
	"context"
	"time"
)

// An outage does not use up a command's time.
//
// A command's own bound (RequestTimeout, SendTimeout) is meant for a
// server that answers slowly or not at all while the client is connected.
// While the client is disconnected (the server restarting, the network
// gone), the command waits for the connection to come back, however long
// that takes, until its caller's ctx ends (the session's deadline,
// Ctrl-C): the clock of its bound stops, and restarts from where it was
// once the connection is back. The wait is visible: the disconnection is
// logged as "waiting for the store", the reconnection with the outage's
// length.

// budget returns ctx bounded by d of connected time. Its cause, when d
// is spent, is context.DeadlineExceeded.
func (s *Store) budget(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	go func() {
		left := d
		for {
			if back := s.outage(); back != nil {
				select {
				case <-back:
				case <-ctx.Done():
					return
				}
			}
			lost := s.connLost()
			if s.outage() != nil {
				continue // dropped again between the two looks
			}
			start := time.Now()
			t := time.NewTimer(left)
			select {
			case <-t.C:
				cancel(context.DeadlineExceeded)
				return
			case <-ctx.Done():
				t.Stop()
				return
			case <-lost:
				t.Stop()
				left -= time.Since(start)
			}
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// outage returns a channel closed when the connection is back, or nil
// while connected.
func (s *Store) outage() <-chan struct{} {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	if s.back == nil {
		return nil
	}
	return s.back
}
