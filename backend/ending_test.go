package backend

import (
	"context"
	"errors"
	"sync"
	"testing"
)

func TestEnding(t *testing.T) {
	var e Ending
	select {
	case <-e.Done():
		t.Fatal("Done closed before Finish")
	default:
	}
	first := errors.New("first")
	var wg sync.WaitGroup
	wg.Go(func() { <-e.Done() })
	e.Finish(first)
	e.Finish(errors.New("second"))
	wg.Wait()
	if e.Err() != first {
		t.Errorf("Err = %v, want the first reason", e.Err())
	}
}

func TestEndingKill(t *testing.T) {
	// stop finishes the teammate: Kill returns nil once Done.
	var e Ending
	stops := 0
	if err := e.Kill(t.Context(), func(context.Context) error { stops++; e.Finish(ErrKilled); return nil }); err != nil {
		t.Fatalf("Kill = %v, want nil", err)
	}
	if stops != 1 || e.Err() != ErrKilled {
		t.Fatalf("after Kill: %d stops, Err %v; want 1 stop and ErrKilled", stops, e.Err())
	}
	// An ended teammate: stop is not called.
	if err := e.Kill(t.Context(), func(context.Context) error { stops++; return nil }); err != nil || stops != 1 {
		t.Fatalf("Kill of an ended teammate = %v with %d stops; want nil and stop not called", err, stops)
	}

	// stop fails: its error, and the teammate has not ended.
	var f Ending
	bad := errors.New("pane refused")
	if err := f.Kill(t.Context(), func(context.Context) error { return bad }); err != bad {
		t.Fatalf("Kill with a failing stop = %v, want %v", err, bad)
	}
	select {
	case <-f.Done():
		t.Fatal("Done closed after a failed stop")
	default:
	}

	// stop leaves the finishing to someone else who never comes: Kill
	// gives up with ctx's cause.
	ctx, cancel := context.WithCancelCause(t.Context())
	gaveUp := errors.New("gave up")
	if err := f.Kill(ctx, func(context.Context) error { cancel(gaveUp); return nil }); err != gaveUp {
		t.Fatalf("Kill with a cancelled ctx = %v, want %v", err, gaveUp)
	}
}
