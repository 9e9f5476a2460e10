package filetool

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
)

// indexLines fills idx for a large file: it counts the newlines of f's
// first size bytes in windows of indexEvery bytes, on as many goroutines
// as may run at once, and records a mark at the start of every window and
// the file's line count. Each window is mapped into memory and counted
// there with bytes.Count, which spares the copy a read makes; on Linux
// the holes of a sparse file (which read as NUL bytes, no newline) are
// skipped. f's offset is left anywhere.
func indexLines(ctx context.Context, f *os.File, size int64, idx *lineIndex) error {
	if size == 0 {
		idx.setTotal(0)
		return nil
	}
	n := int((size + indexEvery - 1) / indexEvery)
	counts := make([]int, n)
	fd := int(f.Fd())
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				err := ctx.Err()
				if err == nil {
					lo := int64(i) * indexEvery
					counts[i], err = countWindow(fd, lo, min(size, lo+indexEvery))
				}
				if err != nil {
					errOnce.Do(func() { first = err })
					next.Store(int64(n)) // the others stop at their next window
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	lines := 0
	for i, c := range counts {
		idx.add(lineMark{lines: lines, off: int64(i) * indexEvery})
		lines += c
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, size-1); err != nil {
		return err
	}
	if last[0] != '\n' {
		lines++ // a last line without a newline
	}
	idx.setTotal(lines)
	return nil
}

// errShrank is the error of a count whose file got shorter meanwhile.
var errShrank = errors.New("the file got shorter while it was read")

// countWindow counts the newlines of the file fd in [lo, hi), skipping
// holes.
func countWindow(fd int, lo, hi int64) (int, error) {
	count := 0
	for lo < hi {
		start, end, err := dataSpan(fd, lo, hi)
		if err != nil {
			return 0, err
		}
		if start >= hi {
			break
		}
		c, err := countMapped(fd, start, end)
		if err != nil {
			return 0, err
		}
		count += c
		lo = end
	}
	return count, nil
}
