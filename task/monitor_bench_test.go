package task

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"testing"
	"time"
)

// BenchmarkMonitorChatty runs a monitor for one second per iteration, with
// a 100 ms window and a filter that every 7th line matches, on a source of
// 10,000 lines a second (100 lines every 10 ms) and on one that emits as
// fast as the monitor takes them. It reports the wakes per window (at most
// 1), the lines per second and the peak heap seen at the wakes (bounded:
// the monitor holds one window's first lines and a count, and the source
// waits on a queue of monitorQueue lines).
func BenchmarkMonitorChatty(b *testing.B) {
	for _, bc := range []struct {
		name string
		tick time.Duration // 0: unpaced
	}{{"10k-lines-per-s", 10 * time.Millisecond}, {"unpaced", 0}} {
		b.Run(bc.name, func(b *testing.B) { benchMonitor(b, bc.tick) })
	}
}

func benchMonitor(b *testing.B, tick time.Duration) {
	const (
		window = 100 * time.Millisecond
		run    = time.Second
	)
	r := New(Config{Dir: b.TempDir(), PollInterval: -1})
	defer r.Close(context.Background())
	var wakes, windows, lines int
	var peak uint64
	for b.Loop() {
		src := func(ctx context.Context, emit func(string) bool) (SourceEnd, error) {
			var c <-chan time.Time
			if tick > 0 {
				t := time.NewTicker(tick)
				defer t.Stop()
				c = t.C
			}
			end := time.Now().Add(run)
			n := 0
			defer func() { lines += n }()
			for time.Now().Before(end) {
				if c != nil {
					select {
					case <-ctx.Done():
						return SourceEnd{}, nil
					case <-c:
					}
				}
				for range 100 {
					n++
					l := fmt.Sprintf("2026-12-08T01:00:00Z request %d served in 3ms", n)
					if n%7 == 0 {
						l = fmt.Sprintf("2026-12-08T01:00:00Z ERROR request %d failed", n)
					}
					if !emit(l) {
						return SourceEnd{}, nil
					}
				}
			}
			return SourceEnd{}, nil
		}
		sub := r.Subscribe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			var ms runtime.MemStats
			for {
				e, err := sub.Next(context.Background())
				if err != nil {
					return
				}
				switch e.Kind {
				case EventMonitor:
					wakes++
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapAlloc)
				case EventTerminated:
					return
				}
			}
		}()
		if _, err := r.StartMonitor(MonitorSpec{Description: "chatty", Filter: regexp.MustCompile(`ERROR`), Batch: window, Lines: src}); err != nil {
			b.Fatal(err)
		}
		<-done
		sub.Close()
		windows += int(run / window)
	}
	b.ReportMetric(float64(wakes)/float64(windows), "wakes/window")
	b.ReportMetric(float64(lines)/(float64(windows)*window.Seconds()), "lines/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}
