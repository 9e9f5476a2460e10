// Package inprocess runs teammates inside the lead's process, each on its
// own goroutine.
//
// Spawn calls Spec.Run with a context that carries the teammate's Identity
// (read it back with IdentityFrom) and every value of the ctx given to
// Spawn, but not its cancellation: the teammate lives until Run returns,
// Handle.Kill or Backend.Close. That is the teammate level of cancellation;
// interrupting one turn is the agent's business.
//
// A Backend is safe for concurrent use. Spawn is idempotent by AgentID: a
// second Spawn of an id whose Run has not returned fails with
// backend.ErrRunning. A panic in Run is recovered and reported by
// Handle.Err as a *PanicError.
package inprocess

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/troupe-dev/troupe/backend"
)

var _ backend.Backend = (*Backend)(nil)

// Identity says who an in-process teammate is. Several teammates share one
// process, so code that needs to know which one it serves reads it from
// the context.
type Identity struct {
	AgentID string // name@team
	Name    string
	Team    string
	Color   string
}

type identityKey struct{}

// WithIdentity returns a copy of ctx that carries id.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the identity carried by ctx, and whether there is
// one.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// PanicError is Handle.Err for a teammate whose Run panicked.
type PanicError struct {
	Value any    // what Run panicked with
	Stack []byte // the goroutine's stack at the panic
}

// PanicStack returns the stack, for a log that reads it without knowing
// this package.
func (e *PanicError) PanicStack() []byte { return e.Stack }

func (e *PanicError) Error() string {
	return fmt.Sprintf("teammate panicked: %v", e.Value)
}

// Backend runs teammates on goroutines. The zero value is not usable; call
// New.
type Backend struct {
	wg sync.WaitGroup // one per running teammate

	mu      sync.Mutex
	closed  bool               // guarded by mu
	running map[string]*Handle // by AgentID, until Run returns; guarded by mu
}

// New returns an empty in-process backend.
func New() *Backend {
	return &Backend{running: map[string]*Handle{}}
}

// Name returns backend.InProcess.
func (b *Backend) Name() string { return backend.InProcess }

// Spawn starts s.Run on its own goroutine and returns its handle. It fails
// with backend.ErrRunning if s.AgentID still runs, backend.ErrClosed after
// Close, and a plain error for a spec without AgentID or Run.
func (b *Backend) Spawn(ctx context.Context, s backend.Spec) (backend.Handle, error) {
	if s.AgentID == "" {
		return nil, errors.New("spawn in-process teammate: spec has no AgentID")
	}
	if s.Run == nil {
		return nil, fmt.Errorf("spawn in-process teammate %s: spec has no Run function", s.AgentID)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("spawn in-process teammate %s: %w", s.AgentID, context.Cause(ctx))
	}
	id := Identity{AgentID: s.AgentID, Name: s.Name, Team: s.Team, Color: s.Color}
	runCtx, cancel := context.WithCancelCause(WithIdentity(context.WithoutCancel(ctx), id))
	h := &Handle{agentID: s.AgentID, cancel: cancel}

	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		cancel(backend.ErrClosed)
		return nil, fmt.Errorf("spawn in-process teammate %s: %w", s.AgentID, backend.ErrClosed)
	}
	if _, ok := b.running[s.AgentID]; ok {
		cancel(backend.ErrRunning)
		return nil, fmt.Errorf("spawn in-process teammate %s: %w", s.AgentID, backend.ErrRunning)
	}
	b.running[s.AgentID] = h
	b.wg.Go(func() {
		err := run(runCtx, s.Run)
		b.mu.Lock()
		if b.running[s.AgentID] == h {
			delete(b.running, s.AgentID)
		}
		b.mu.Unlock()
		h.finish(err)
	})
	return h, nil
}

// run calls f, turning a panic into a *PanicError.
func run(ctx context.Context, f func(context.Context) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return f(ctx)
}

// Close kills every running teammate and waits for their Run to return,
// or for ctx. It is idempotent; Spawn fails with backend.ErrClosed after
// it.
func (b *Backend) Close(ctx context.Context) error {
	b.mu.Lock()
	b.closed = true
	hs := make([]*Handle, 0, len(b.running))
	for _, h := range b.running {
		hs = append(hs, h)
	}
	b.mu.Unlock()
	for _, h := range hs {
		h.stop()
	}
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close in-process backend: %d teammates still running: %w", b.count(), context.Cause(ctx))
	}
}

func (b *Backend) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.running)
}

// Handle is one in-process teammate.
type Handle struct {
	agentID string
	cancel  context.CancelCauseFunc
	end     backend.Ending
	killed  atomic.Bool // Kill or Close asked it to stop
}

var _ backend.Handle = (*Handle)(nil)

// AgentID returns the teammate's id.
func (h *Handle) AgentID() string { return h.agentID }

// PaneID returns backend.InProcess: an in-process teammate has no pane.
func (h *Handle) PaneID() string { return backend.InProcess }

// Backend returns backend.InProcess.
func (h *Handle) Backend() string { return backend.InProcess }

// Done is closed once Run has returned.
func (h *Handle) Done() <-chan struct{} { return h.end.Done() }

// Err is what Run returned, after Done. It is backend.ErrKilled when Kill
// or Close stopped the teammate (joined with Run's own error when that is
// not the cancellation), and a *PanicError when Run panicked.
func (h *Handle) Err() error { return h.end.Err() }

// Kill cancels Run's context and waits for Run to return, or for ctx. Killing
// an ended teammate is a no-op.
func (h *Handle) Kill(ctx context.Context) error {
	h.stop()
	select {
	case <-h.end.Done():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("kill in-process teammate %s: still running: %w", h.agentID, context.Cause(ctx))
	}
}

// stop asks Run to return.
func (h *Handle) stop() {
	h.killed.Store(true)
	h.cancel(backend.ErrKilled)
}

// finish records why Run ended and closes Done.
func (h *Handle) finish(err error) {
	if h.killed.Load() {
		var pe *PanicError
		switch {
		case err == nil, errors.Is(err, context.Canceled), errors.Is(err, backend.ErrKilled):
			err = backend.ErrKilled
		case !errors.As(err, &pe):
			err = errors.Join(backend.ErrKilled, err)
		}
	}
	h.cancel(nil)
	h.end.Finish(err)
}
