package logtest

import (
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWrites: lines written from many goroutines while another
// reads all arrive whole (run under -race).
func TestConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("line\n"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := strings.Count(b.String(), "line\n"); got != 800 {
		t.Fatalf("%d lines; want 800", got)
	}
}
