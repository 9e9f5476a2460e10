package backend

import (
	"context"
	"sync"
)

// Ending is the end of a teammate as a handle reports it: Done and Err.
// Pane backends keep one in each handle (unexported, so that only the
// backend can Finish it), call Finish when the teammate has ended, and
// build Handle.Kill on Kill. The zero value is ready to use; it is safe for
// concurrent use.
type Ending struct {
	mu    sync.Mutex
	done  chan struct{}
	ended bool
	err   error
}

// Done is closed when Finish has been called.
func (e *Ending) Done() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done == nil {
		e.done = make(chan struct{})
	}
	return e.done
}

// Err is the error given to Finish; nil before.
func (e *Ending) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// Finish records why the teammate ended and closes Done. Later calls are
// no-ops: the first reason stands.
func (e *Ending) Finish(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended {
		return
	}
	if e.done == nil {
		e.done = make(chan struct{})
	}
	e.ended, e.err = true, err
	close(e.done)
}

// Kill is the body of a pane handle's Kill. When the teammate has not
// ended yet, it calls stop, which closes the pane and Finishes e, and
// then waits for Done (another goroutine may be finishing it) or for ctx.
// Killing an ended teammate is a no-op.
func (e *Ending) Kill(ctx context.Context, stop func(context.Context) error) error {
	select {
	case <-e.Done():
		return nil
	default:
	}
	if err := stop(ctx); err != nil {
		return err
	}
	select {
	case <-e.Done():
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
