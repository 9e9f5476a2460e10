package task

import (
	"sync"
	"time"
)

// fakeClock is a Clock that moves only when Advance is called, for tests
// with real processes (testing/synctest cannot hold those).
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	tickers []*fakeTicker
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTicker(d time.Duration) Ticker {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTicker{c: make(chan time.Time, 1), d: d, next: c.now.Add(d), clock: c}
	c.tickers = append(c.tickers, t)
	return t
}

// Advance moves the clock by d and fires the tickers due, like
// time.Ticker: a tick nobody took yet is not doubled.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for _, t := range c.tickers {
		for !t.stopped && !t.next.After(c.now) {
			select {
			case t.c <- t.next:
			default:
			}
			t.next = t.next.Add(t.d)
		}
	}
}

type fakeTicker struct {
	c       chan time.Time
	d       time.Duration
	next    time.Time // guarded by clock.mu
	stopped bool      // guarded by clock.mu
	clock   *fakeClock
}

func (t *fakeTicker) C() <-chan time.Time { return t.c }

func (t *fakeTicker) Stop() {
	t.clock.mu.Lock()
	t.stopped = true
	t.clock.mu.Unlock()
}
