package flight

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
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
// up, the others read again instead of failing with its error.
func TestDoStarterGivesUp(t *testing.T) {
	var g Group[string]
	block := make(chan struct{})
	first := make(chan struct{})
	starterCtx, cancelStarter := context.WithCancel(t.Context())
	// A read is running; the two callers below share the next one.
	go g.Do(t.Context(), "k", func(context.Context) (string, error) {
		close(first)
		<-block
		return "old", nil
	})
	<-first
	var wg sync.WaitGroup
	results := make(chan string, 2)
	for _, ctx := range []context.Context{starterCtx, t.Context()} {
		wg.Go(func() {
			v, err := g.Do(ctx, "k", func(ctx context.Context) (string, error) {
				<-ctx.Done()
				return "", ctx.Err()
			})
			if err == nil {
				results <- v
			}
		})
	}
	time.Sleep(10 * time.Millisecond)
	close(block)
	time.Sleep(10 * time.Millisecond)
	cancelStarter()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		t.Fatal("the caller whose ctx lives returned; want it reading again (its read waits for its own ctx)")
	case <-time.After(50 * time.Millisecond):
	}
}
