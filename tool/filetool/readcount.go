package filetool

import (
	"bytes"
	"context"
	"errors"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
)

// countEvery is the size of the parts the first count of a large file
// splits it into: the unit of work of its goroutines, and the distance
// between the marks it leaves, so that a Read of any line after it reads
// at most this much before the lines it shows.
const countEvery = 1 << 20

// span is a part [start, end) of a file.
type span struct{ start, end int64 }

// indexLines fills idx for a large file: it maps the file's first size
// bytes into memory once and counts their newlines with bytes.Count, in
// parts of countEvery bytes on as many goroutines as may run at once,
// then records a mark at the start of every part and the file's line
// count. Counting in place spares the copy a read makes, and one mapping
// for the whole file spares a mapping and unmapping per part (and the
// other core's TLB flush each unmapping costs). On Linux the holes of a
// sparse file (which read as NUL bytes, no newline) are skipped. A file
// that cannot be mapped (as on a 32-bit system, a file larger than the
// address space) is an error that is not errShrank: the Read then counts
// as it reads.
func indexLines(ctx context.Context, f *os.File, size int64, idx *lineIndex) error {
	if size == 0 {
		idx.setTotal(0)
		return nil
	}
	fd := int(f.Fd())
	spans, err := dataSpans(fd, size)
	if err != nil {
		return err
	}
	data, err := mapFile(fd, size)
	if err != nil {
		return err
	}
	defer unmapFile(data)
	n := int((size + countEvery - 1) / countEvery)
	counts := make([]int, n)
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
					lo := int64(i) * countEvery
					counts[i], err = countSpans(data, spans, lo, min(size, lo+countEvery))
				}
				if err != nil {
					errOnce.Do(func() { first = err })
					next.Store(int64(n)) // the others stop at their next part
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	marks := make([]lineMark, n)
	lines := 0
	for i, c := range counts {
		marks[i] = lineMark{lines: lines, off: int64(i) * countEvery}
		lines += c
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, size-1); err != nil {
		return err
	}
	if last[0] != '\n' {
		lines++ // a last line without a newline
	}
	idx.setCounted(marks, lines)
	return nil
}

// errShrank is the error of a count whose file got shorter meanwhile.
var errShrank = errors.New("the file got shorter while it was read")

// countSpans counts the newlines of data, a mapped file whose data (not
// holes) are spans, in [lo, hi). A file cut shorter while mapped makes
// the count fault; that fault is caught and reported as errShrank.
func countSpans(data []byte, spans []span, lo, hi int64) (count int, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			count, err = 0, errShrank
		}
	}()
	i := sort.Search(len(spans), func(i int) bool { return spans[i].end > lo })
	for ; i < len(spans) && spans[i].start < hi; i++ {
		count += bytes.Count(data[max(lo, spans[i].start):min(hi, spans[i].end)], []byte{'\n'})
	}
	return count, nil
}
