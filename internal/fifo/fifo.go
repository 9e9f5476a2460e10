// Package fifo is the unbounded, ordered queue behind event
// subscriptions: pushing never blocks, so a slow reader never holds up
// the writer, and a reader waits for the next item with a context.
package fifo

import (
	"context"
	"sync"
)

// Queue holds items in order until they are read. The zero value is not
// ready: use New. It is safe for concurrent use.
type Queue[T any] struct {
	kick chan struct{} // 1 slot; a send never blocks

	mu     sync.Mutex
	items  []T
	closed bool
}

// New returns an empty, open queue.
func New[T any]() *Queue[T] { return &Queue[T]{kick: make(chan struct{}, 1)} }

// Push adds v at the end; after Close it does nothing. It never blocks.
func (q *Queue[T]) Push(v T) { q.PushOr(v, nil) }

// PushOr adds v at the end, or, when replace reports true for the last
// queued item, puts v in its place (a coalesced update).
func (q *Queue[T]) PushOr(v T, replace func(last T) bool) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	if n := len(q.items); replace != nil && n > 0 && replace(q.items[n-1]) {
		q.items[n-1] = v
	} else {
		q.items = append(q.items, v)
	}
	q.mu.Unlock()
	q.signal()
}

func (q *Queue[T]) signal() {
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// Len returns how many items wait.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// TryNext returns the next item, if one is queued.
func (q *Queue[T]) TryNext() (T, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var zero T
	if len(q.items) == 0 {
		return zero, false
	}
	v := q.items[0]
	q.items[0] = zero
	q.items = q.items[1:]
	return v, true
}

// Next waits for the next item. It returns closed once the queue is
// closed and drained, or ctx's cause.
func (q *Queue[T]) Next(ctx context.Context, closed error) (T, error) {
	for {
		if v, ok := q.TryNext(); ok {
			return v, nil
		}
		q.mu.Lock()
		done := q.closed
		q.mu.Unlock()
		var zero T
		if done {
			return zero, closed
		}
		select {
		case <-q.kick:
		case <-ctx.Done():
			return zero, context.Cause(ctx)
		}
	}
}

// Wait waits until an item is queued, without taking it (several readers
// that take under a lock of their own keep the queue's order that way).
// It returns closed once the queue is closed and drained, or ctx's cause.
func (q *Queue[T]) Wait(ctx context.Context, closed error) error {
	for {
		q.mu.Lock()
		n, done := len(q.items), q.closed
		q.mu.Unlock()
		switch {
		case n > 0:
			return nil
		case done:
			return closed
		}
		select {
		case <-q.kick:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// Close stops the queue taking items; those queued can still be read. It
// reports whether it closed it (false when it was closed already).
func (q *Queue[T]) Close() bool {
	q.mu.Lock()
	was := q.closed
	q.closed = true
	q.mu.Unlock()
	q.signal()
	return !was
}
