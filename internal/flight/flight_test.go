package flight

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestDoNeverStale: every caller gets a read that began after its call
// did, so it sees every write made before it called; concurrent callers
// share reads.
func TestDoNeverStale(t *testing.T) {
	var g Group[int64]
	var version, reads atomic.Int64
	read := func(context.Context) (int64, error) {
		reads.Add(1)
		v := version.Load()
		time.Sleep(2 * time.Millisecond)
		return v, nil
	}
	const callers = 200
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			if i%4 == 0 {
				version.Add(1) // a write, finished before this caller reads
			}
			want := version.Load()
			got, err := g.Do(t.Context(), "list", read)
			if err != nil {
				t.Errorf("Do: %v", err)
			}
			if got < want {
				t.Errorf("Do = version %d; want at least %d, the version before the call", got, want)
			}
		})
	}
	wg.Wait()
	if n := reads.Load(); n >= callers {
		t.Errorf("%d reads for %d concurrent callers; want them shared", n, callers)
	}
	t.Logf("%d reads for %d callers", reads.Load(), callers)
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.keys) != 0 {
		t.Errorf("%d keys left after every call returned; want 0", len(g.keys))
	}
}

// TestDoStarterGivesUp: when the caller that started a shared read gives
// up, the others read again instead of failing with its error. The bubble
// lets each step wait until every goroutine is blocked, not for a time.
func TestDoStarterGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Group[string]
		block := make(chan struct{})
		// A read is running; the two callers below share the next one.
		go g.Do(context.Background(), "k", func(context.Context) (string, error) {
			<-block
			return "old", nil
		})
		synctest.Wait()
		type caller struct {
			ctx    context.Context
			cancel context.CancelFunc
			err    chan error
		}
		var callers [2]caller
		var mu sync.Mutex
		var readers []context.Context // the ctx of each read, in order
		var wg sync.WaitGroup
		for i := range callers {
			ctx, cancel := context.WithCancel(context.Background())
			callers[i] = caller{ctx, cancel, make(chan error, 1)}
			wg.Go(func() {
				_, err := g.Do(ctx, "k", func(ctx context.Context) (string, error) {
					mu.Lock()
					readers = append(readers, ctx)
					mu.Unlock()
					<-ctx.Done()
					return "", ctx.Err()
				})
				callers[i].err <- err
			})
		}
		synctest.Wait() // both callers wait for the running read
		close(block)
		synctest.Wait() // one of them started the shared read; the other waits for it
		if len(readers) != 1 {
			t.Fatalf("%d reads started for the two waiting callers; want one shared", len(readers))
		}
		starter, other := callers[0], callers[1]
		if readers[0] != starter.ctx {
			starter, other = other, starter
		}
		starter.cancel()
		synctest.Wait()
		if err := <-starter.err; !errors.Is(err, context.Canceled) {
			t.Errorf("the starter's call = %v; want its own cancellation", err)
		}
		select {
		case err := <-other.err:
			t.Fatalf("the caller whose ctx lives returned %v; want it reading again", err)
		default:
		}
		if len(readers) != 2 || readers[1] != other.ctx {
			t.Errorf("%d reads after the starter gave up; want a second one of the living caller's own", len(readers))
		}
		other.cancel()
		wg.Wait()
	})
}
