package filetool

import (
	"bytes"
	"context"
	"errors"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
)

// countEvery is the size of the parts the first count of a large file
// splits it into: the unit of work of its goroutines, and the distance
// between the marks it leaves, so that a Read of any line after it reads
// at most this much before the lines it shows.
const countEvery = 1 << 20

// mapChunk is how much of a file the first count maps at once: 1 GiB
// (256 MiB where addresses have 32 bits), a multiple of countEvery. A
// larger file is counted a chunk at a time, so that no more than this of
// it is mapped into the process.
const mapChunk = 1 << (28 + 2*(strconv.IntSize/64))

// span is a part [start, end) of a file.
type span struct{ start, end int64 }

// indexLines fills idx for a large file: it maps the file's first size
// bytes into memory, a chunk of up to mapChunk at a time, and counts
// their newlines with bytes.Count, in parts of countEvery bytes on as
// many goroutines as may run at once, then records a mark at the start of
// every part and the file's line count. Counting in place spares the copy
// a read makes, and one mapping per chunk spares a mapping and unmapping
// per part (each unmapping interrupts the other cores to flush their
// TLBs). On Linux the holes of a sparse file (which read as NUL bytes, no
// newline) are skipped. A file that cannot be mapped is an error that is
// not errShrank: the Read then counts as it reads.
func indexLines(ctx context.Context, f *os.File, size int64, idx *lineIndex) error {
	return indexLinesBy(ctx, f, size, idx, mapChunk)
}

// indexLinesBy is indexLines mapping chunk bytes at a time, a multiple of
// countEvery.
func indexLinesBy(ctx context.Context, f *os.File, size int64, idx *lineIndex, chunk int64) error {
	if size == 0 {
		idx.setTotal(0)
		return nil
	}
	fd := int(f.Fd())
	spans, err := dataSpans(fd, size)
	if err != nil {
		return err
	}
	counts := make([]int, (size+countEvery-1)/countEvery)
	for base := int64(0); base < size; base += chunk {
		if err := countChunk(ctx, fd, spans, base, min(size, base+chunk), counts); err != nil {
			return err
		}
	}
	marks := make([]lineMark, len(counts))
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

// countChunk maps [base, end) of the file fd, whose data (not holes) are
// spans, and counts the newlines of each of its parts of countEvery bytes
// into counts (indexed by part from the file's start), on as many
// goroutines as may run at once.
func countChunk(ctx context.Context, fd int, spans []span, base, end int64, counts []int) error {
	data, err := mapFile(fd, base, end-base)
	if err != nil {
		return err
	}
	defer unmapFile(data)
	first, n := int(base/countEvery), int((end-base+countEvery-1)/countEvery)
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		failed  error
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
					lo := base + int64(i)*countEvery
					counts[first+i], err = countSpans(data, base, spans, lo, min(end, lo+countEvery))
				}
				if err != nil {
					errOnce.Do(func() { failed = err })
					next.Store(int64(n)) // the others stop at their next part
					return
				}
			}
		})
	}
	wg.Wait()
	return failed
}

// errShrank is the error of a count whose file got shorter meanwhile.
var errShrank = errors.New("the file got shorter while it was read")

// countSpans counts the newlines in [lo, hi) of a file whose data (not
// holes) are spans, mapped at data from its byte base on. A file cut
// shorter while mapped makes the count fault; that fault is caught and
// reported as errShrank.
func countSpans(data []byte, base int64, spans []span, lo, hi int64) (count int, err error) {
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
		count += bytes.Count(data[max(lo, spans[i].start)-base:min(hi, spans[i].end)-base], []byte{'\n'})
	}
	return count, nil
}
