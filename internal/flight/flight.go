// Package flight coalesces concurrent reads of the same thing into one
// read, without serving anyone a stale result.
//
// Unlike a plain single-flight, a caller never joins a read that began
// before it did: a write that completed before the call could be missing
// from such a read. A caller that finds a read of its key running waits
// for it to end and shares the next one, which starts after every caller
// that shares it began. However many callers arrive, at most one read of
// a key runs at a time, and each caller waits at most for the one running
// plus its own. This is for reads that many goroutines of one process
// repeat when they are woken together (a thousand idle teammates listing
// the task list after each change).
//
// A Group is safe for concurrent use. Callers share the value a read
// returned: they must copy it before changing it.
package flight

import (
	"context"
	"errors"
	"sync"
)

// Group coalesces reads by key. The zero value is ready to use.
type Group[T any] struct {
	mu   sync.Mutex
	keys map[string]*state[T] // guarded by mu
}

type state[T any] struct {
	running *call[T] // the read in progress
	next    *call[T] // the read the callers that found one running share
}

type call[T any] struct {
	done    chan struct{}
	started bool // guarded by the Group's mu
	val     T
	err     error
}

// Do returns the result of read for key, made by this call or shared with
// concurrent callers; read starts after this call began. A shared read
// runs with the ctx of the caller that starts it; a caller whose own ctx
// is still alive when that read failed because its starter's ctx ended
// reads again.
func (g *Group[T]) Do(ctx context.Context, key string, read func(context.Context) (T, error)) (T, error) {
	for {
		val, err, theirs := g.do(ctx, key, read)
		if theirs && ctx.Err() == nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			continue // the starter gave up, not us
		}
		return val, err
	}
}

// do reports with theirs whether the read was started by another caller.
func (g *Group[T]) do(ctx context.Context, key string, read func(context.Context) (T, error)) (val T, err error, theirs bool) {
	g.mu.Lock()
	if g.keys == nil {
		g.keys = map[string]*state[T]{}
	}
	st := g.keys[key]
	if st == nil {
		st = &state[T]{}
		g.keys[key] = st
	}
	if st.running == nil {
		c := &call[T]{done: make(chan struct{}), started: true}
		st.running = c
		g.mu.Unlock()
		g.run(ctx, key, st, c, read)
		return c.val, c.err, false
	}
	prev := st.running
	if st.next == nil {
		st.next = &call[T]{done: make(chan struct{})}
	}
	c := st.next
	g.mu.Unlock()
	select {
	case <-prev.done:
	case <-ctx.Done():
		return val, context.Cause(ctx), false
	}
	g.mu.Lock()
	if c.started {
		g.mu.Unlock()
		select {
		case <-c.done:
			return c.val, c.err, true
		case <-ctx.Done():
			return val, context.Cause(ctx), false
		}
	}
	c.started = true
	st.next = nil
	st.running = c
	g.mu.Unlock()
	g.run(ctx, key, st, c, read)
	return c.val, c.err, false
}

// run makes read c and publishes its result.
func (g *Group[T]) run(ctx context.Context, key string, st *state[T], c *call[T], read func(context.Context) (T, error)) {
	defer func() {
		g.mu.Lock()
		if st.running == c {
			st.running = nil
		}
		if st.running == nil && st.next == nil && g.keys[key] == st {
			delete(g.keys, key)
		}
		g.mu.Unlock()
		close(c.done)
	}()
	c.val, c.err = read(ctx)
}
