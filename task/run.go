package task

import (
	"context"
	"errors"
	"fmt"
)

// ErrStopped is the cancellation cause a Go task's context gets from Stop.
var ErrStopped = errors.New("task: stopped")

// Outcome is how a Go task ended: its terminal status and an optional
// change recording its result (for an agent, the final text and usage).
type Outcome struct {
	Status Status
	Record func(State) State
}

// Go registers s as running and runs f in a goroutine owned by the
// registry: the in-process shape of a background agent or teammate. Stop
// (or Close) cancels f's context with cause ErrStopped and waits for f to
// return (or for the stopper's ctx), and the task ends killed, silently;
// otherwise, when f returns, the task finishes with f's outcome and the
// model is notified. An outcome that is not terminal counts as failed.
func (r *Registry) Go(s State, f func(ctx context.Context, id ID) Outcome) (State, error) {
	ctx, cancel := context.WithCancelCause(r.ctx)
	done := make(chan struct{})
	kill := func(stopCtx context.Context, _ State) error {
		cancel(ErrStopped)
		select {
		case <-done:
			return nil
		case <-stopCtx.Done():
			return fmt.Errorf("wait for task to stop: %w", context.Cause(stopCtx))
		}
	}
	s.Status = Running
	if s.ID != "" {
		// This run owns the id from now on: a stopped earlier run of it
		// whose goroutine is still finishing must leave it alone.
		r.mu.Lock()
		r.runs[s.ID] = done
		r.mu.Unlock()
	}
	s, err := r.Register(s, kill)
	if err != nil {
		cancel(nil)
		return State{}, err
	}
	id := s.ID
	r.mu.Lock()
	r.runs[id] = done
	r.mu.Unlock()
	ok := r.goFunc(func(context.Context) {
		defer cancel(nil)
		out := func() Outcome {
			defer close(done)
			return f(ctx, id)
		}()
		if !out.Status.Terminal() {
			out.Status = Failed
		}
		r.mu.Lock()
		if cur, ok := r.runs[id]; ok && cur != done {
			r.mu.Unlock()
			return // stopped, then run again: the new run owns the task
		}
		r.mu.Unlock() // a stop under way turns the end into Killed (finish)
		if _, err := r.Finish(id, out.Status, out.Record); err != nil && out.Record != nil {
			r.Update(id, out.Record) // stopped first: keep the result anyway
		}
	})
	if !ok {
		cancel(ErrClosed)
		close(done)
		st, _ := r.finish(id, Killed, nil, true)
		return st, ErrClosed
	}
	return s, nil
}
