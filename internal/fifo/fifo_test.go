package fifo

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

var errClosed = errors.New("closed")

func TestQueue(t *testing.T) {
	q := New[int]()
	var wg sync.WaitGroup
	const writers, each = 8, 500
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				q.Push(w*each + i)
			}
		})
	}
	got := map[int]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for len(got) < writers*each {
		v, err := q.Next(ctx, errClosed)
		if err != nil {
			t.Fatalf("after %d items: %v", len(got), err)
		}
		got[v] = true
	}
	wg.Wait()
	q.PushOr(1, nil)
	q.PushOr(2, func(last int) bool { return last == 1 })
	q.PushOr(3, func(last int) bool { return last == 1 })
	if q.Len() != 2 {
		t.Errorf("Len after a coalesced push = %d, want 2", q.Len())
	}
	if !q.Close() || q.Close() {
		t.Error("Close reported wrongly")
	}
	q.Push(9) // ignored
	for _, want := range []int{2, 3} {
		if v, err := q.Next(ctx, errClosed); err != nil || v != want {
			t.Errorf("Next = %d, %v; want %d", v, err, want)
		}
	}
	if _, err := q.Next(ctx, errClosed); !errors.Is(err, errClosed) {
		t.Errorf("Next on a drained closed queue: %v", err)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if _, err := New[int]().Next(cctx, errClosed); !errors.Is(err, context.Canceled) {
		t.Errorf("Next with a canceled context: %v", err)
	}
}

// TestWait: Wait returns once an item is queued and leaves it there;
// readers that wait and then take under one lock of their own keep the
// queue's order, however many there are.
func TestWait(t *testing.T) {
	q := New[int]()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const n = 2000
	go func() {
		for i := range n {
			q.Push(i)
		}
	}()
	var mu sync.Mutex
	var got []int
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				if err := q.Wait(ctx, errClosed); err != nil {
					return
				}
				mu.Lock()
				if v, ok := q.TryNext(); ok {
					got = append(got, v)
				}
				done := len(got) == n
				mu.Unlock()
				if done {
					q.Close()
				}
			}
		})
	}
	wg.Wait()
	if len(got) != n {
		t.Fatalf("took %d items; want %d", len(got), n)
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("item %d is %d: out of order", i, v)
		}
	}
	q2 := New[int]()
	q2.Push(7)
	if err := q2.Wait(ctx, errClosed); err != nil || q2.Len() != 1 {
		t.Errorf("Wait with an item queued = %v, Len %d; want nil and the item left", err, q2.Len())
	}
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if err := New[int]().Wait(cctx, errClosed); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with a canceled context: %v", err)
	}
}
