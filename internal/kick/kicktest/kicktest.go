// Package kicktest checks watch channels (coalesced kicks, closed when the
// watch ends) in the stores' conformance suites.
package kicktest

import (
	"testing"
	"time"
)

// Drain takes the kicks already pending on ch, until none comes for
// 50 ms, so that the next Wait sees a kick of the next change.
func Drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond):
			return
		}
	}
}

// Wait fails t unless ch gets a kick within 10 s of what happened.
func Wait(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case _, open := <-ch:
		if !open {
			t.Fatalf("after %s: the watch channel closed", what)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("after %s: no kick within 10 s", what)
	}
}

// Closes fails t unless ch is closed within 10 s (its watch's context has
// ended); kicks before the close are ignored.
func Closes(t testing.TB, ch <-chan struct{}) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, open := <-ch:
			if !open {
				return
			}
		case <-deadline:
			t.Fatal("the watch channel stayed open 10 s after its context ended")
		}
	}
}
