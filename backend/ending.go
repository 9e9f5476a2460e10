package backend

import "sync"

// Ending is the end of a teammate as a handle reports it: Done and Err.
// Pane backends embed it in their handles and call Finish once, when
// the teammate has ended. The zero value is ready to use; it is safe for
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
