package filetool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/troupe-dev/troupe/tool"
)

// search runs q over files and formats the result.
//
// The files are searched in parallel, by as many workers as the process
// may run at once, but their results are put together in one fixed order
// whatever the workers' timing: files_with_matches lists the matched files
// the most recently modified first (then by path), count and content go
// by path. In content mode the search stops once head_limit or the output
// budget is reached.
//
// walk lists the files to search, in path order, handing each to push; it
// stops when push reports false. Its error, other than ctx's, is
// walkErr: the files could not be listed. withheld is the count of files
// walk withheld, read once it is done.
func (g *Grep) search(ctx context.Context, q grepQuery, base string, walk func(context.Context, func(found) bool) error, withheld *int) (res tool.Result, walkErr, err error) {
	out := &grepOutput{budget: g.cfg.MaxReadBytes, skip: q.offset, limit: q.headLimit}
	var (
		skippedLarge           int
		matchedFiles, matchSum int
		matched                []found
		counts                 []string
		separate               = q.before > 0 || q.after > 0
	)
	walkErr, err = g.searchFiles(ctx, &q, walk, func(f found, r *fileResult) bool {
		if r.large {
			skippedLarge++
		}
		if r.matched == 0 {
			return true
		}
		matchedFiles++
		matchSum += r.matched
		switch q.mode {
		case "files_with_matches":
			matched = append(matched, f)
		case "count":
			counts = append(counts, g.cfg.display(f.abs)+":"+strconv.Itoa(r.matched))
		case "content":
			for _, group := range r.groups {
				if separate && out.started() && !out.add("--") {
					return false
				}
				for _, line := range group {
					if !out.add(line) {
						return false
					}
				}
			}
		}
		return true
	})
	if err != nil || walkErr != nil {
		return tool.Result{}, walkErr, err
	}
	if matchedFiles == 0 {
		msg := fmt.Sprintf("No matches found for %q in %s", q.pattern, base)
		return tool.Result{Content: msg + largeNote(skippedLarge) + withheldNote(*withheld)}, nil, nil
	}
	if q.mode == "files_with_matches" {
		for i := range matched {
			if matched[i].mtime.IsZero() {
				if info, err := os.Lstat(matched[i].abs); err == nil {
					matched[i].mtime = info.ModTime()
				}
			}
		}
		sortByMtime(matched)
		for _, f := range matched {
			counts = append(counts, g.cfg.display(f.abs))
		}
	}
	var b strings.Builder
	switch q.mode {
	case "files_with_matches":
		fmt.Fprintf(&b, "Found %s\n", plural(matchedFiles, "file"))
		for _, c := range counts {
			if !out.add(c) {
				break
			}
		}
		b.WriteString(out.b.String())
	case "count":
		for _, c := range counts {
			if !out.add(c) {
				break
			}
		}
		b.WriteString(out.b.String())
		fmt.Fprintf(&b, "\nFound %s in %s.\n", plural(matchSum, "matching line"), plural(matchedFiles, "file"))
	case "content":
		b.WriteString(out.b.String())
	}
	if out.n == 0 && q.offset > 0 {
		fmt.Fprintf(&b, "[No output at offset %d: the output is shorter than that.]\n", q.offset)
	}
	next := q.offset + out.n
	switch {
	case out.cut:
		fmt.Fprintf(&b, "[Output cut at %s. Narrow the search (path, glob, type, a more specific pattern) or page with head_limit and offset=%d.]\n", size(g.cfg.MaxReadBytes), next)
	case out.more:
		fmt.Fprintf(&b, "[Output limited by head_limit=%d; continue with offset=%d.]\n", q.headLimit, next)
	}
	return tool.Result{Content: strings.TrimSuffix(b.String()+largeNote(skippedLarge)+withheldNote(*withheld), "\n")}, nil, nil
}

// largeNote notes files skipped for their size.
func largeNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("\n[%s larger than %s not searched.]", plural(n, "file"), size(maxGrepFile))
}

// fileResult is the search of one file.
type fileResult struct {
	large   bool // skipped for its size
	matched int  // how many lines matched
	// groups, in content mode, are the output lines of the matches and
	// their context, in groups of adjacent lines (a "--" goes between
	// groups when context was asked for). They are cut short once they
	// are more than any output can take.
	groups [][]string
}

// errSearchStopped ends a walk whose files are no longer wanted.
var errSearchStopped = errors.New("search stopped")

// searchFiles runs walk on its own goroutine and searches the files it
// finds on parallel workers, as many as the process may run at once. It
// calls each with the result of every file in walk's order, from the
// goroutine that called it, until each returns false. Workers take the
// files in that order, in chunks, and a chunk's results wait until those
// before them are handed over. It returns once its goroutines are done:
// with walk's error (other than ctx's) as walkErr, and ctx's error if ctx
// ended first.
func (g *Grep) searchFiles(parent context.Context, q *grepQuery, walk func(context.Context, func(found) bool) error, each func(f found, r *fileResult) bool) (walkErr, err error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var (
		queue   = newFileQueue()
		done    = make(chan *fileChunk)
		quit    = make(chan struct{})
		stopped atomic.Bool    // the search is over
		enough  bool           // each wanted no more
		all     sync.WaitGroup // the walk, the workers and the closer of done
		workers sync.WaitGroup
	)
	stop := func() {
		if stopped.CompareAndSwap(false, true) {
			cancel()
			close(quit)
			queue.close()
		}
	}
	all.Go(func() {
		defer queue.close()
		const batch = 32
		pending := make([]found, 0, batch)
		walkErr = walk(ctx, func(f found) bool {
			if stopped.Load() {
				return false
			}
			if pending = append(pending, f); len(pending) == batch {
				queue.push(pending)
				pending = pending[:0]
			}
			return true
		})
		queue.push(pending)
	})
	for range runtime.GOMAXPROCS(0) {
		workers.Go(func() {
			var w grepWorker
			for ctx.Err() == nil {
				c, ok := queue.take(64)
				if !ok {
					return
				}
				c.results = make([]fileResult, len(c.files))
				for i, f := range c.files {
					c.results[i] = w.search(g.cfg, q, f.abs)
				}
				select {
				case done <- c:
				case <-quit:
					return
				}
			}
		})
	}
	all.Go(func() {
		workers.Wait()
		close(done)
	})
	pending := map[int]*fileChunk{}
	next := 0
	for c := range done {
		pending[c.seq] = c
		for c := pending[next]; c != nil && !stopped.Load(); c = pending[next] {
			delete(pending, next)
			next++
			for i := range c.files {
				if !each(c.files[i], &c.results[i]) {
					enough = true
					stop()
					break
				}
			}
		}
		if stopped.Load() {
			break
		}
	}
	stop()
	all.Wait()
	if err := parent.Err(); err != nil {
		return nil, err
	}
	if enough {
		return nil, nil // the walk was cut short on purpose
	}
	return walkErr, nil
}

// fileChunk is a run of consecutive files a worker searches.
type fileChunk struct {
	seq     int // its place among the chunks
	files   []found
	results []fileResult
}

// fileQueue hands the files a walk finds to the workers, in chunks.
type fileQueue struct {
	mu   sync.Mutex
	cond sync.Cond
	// Guarded by mu:
	files  []found // found and not yet taken
	seq    int     // chunks taken
	closed bool
}

func newFileQueue() *fileQueue {
	q := &fileQueue{}
	q.cond.L = &q.mu
	return q
}

// push adds files (copied) to the queue.
func (q *fileQueue) push(files []found) {
	if len(files) == 0 {
		return
	}
	q.mu.Lock()
	q.files = append(q.files, files...)
	q.mu.Unlock()
	q.cond.Broadcast()
}

// close tells the workers no more files will come.
func (q *fileQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

// take waits for files and returns the next chunk of at most max of them;
// ok is false once the queue is closed and empty.
func (q *fileQueue) take(max int) (c *fileChunk, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.files) == 0 && !q.closed {
		q.cond.Wait()
	}
	if len(q.files) == 0 {
		return nil, false
	}
	n := min(len(q.files), max)
	c = &fileChunk{seq: q.seq, files: q.files[:n:n]}
	q.files = q.files[n:]
	q.seq++
	return c, true
}

// grepWorker is one search worker's reusable memory.
type grepWorker struct {
	buf     []byte // the file being searched
	matched []int  // offsets of the matched lines' starts
	starts  []int  // offsets of all lines' starts (content mode)
}

// search searches the file abs.
func (w *grepWorker) search(c Config, q *grepQuery, abs string) fileResult {
	content, ok, large := w.read(c, abs)
	if !ok {
		return fileResult{large: large}
	}
	w.matched = q.m.find(content, q.mode == "files_with_matches", w.matched[:0])
	r := fileResult{matched: len(w.matched)}
	if r.matched > 0 && q.mode == "content" {
		r.groups = w.format(content, c.display(abs), q, c.MaxReadBytes)
	}
	return r
}

// read reads the file abs into w.buf. ok is false for a file that cannot
// be read, looks binary (a NUL byte in its first bytes), or is too large
// (then large is true). A file whose real path Confine refuses (a link
// swapped in, or one leading where the search may not look) is not read
// either.
func (w *grepWorker) read(c Config, abs string) (content []byte, ok, large bool) {
	if c.Confine == nil {
		return w.readFD(c, abs)
	}
	return w.readOS(c, abs)
}

// readOS is read through package os, which Confine needs: it looks at
// the open *os.File.
func (w *grepWorker) readOS(c Config, abs string) (content []byte, ok, large bool) {
	f, err := os.Open(abs)
	if err != nil {
		return nil, false, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, false, false
	}
	if st.Size() > maxGrepFile {
		return nil, false, true
	}
	if _, ok := c.confineFile("Grep", abs, f); !ok {
		return nil, false, false
	}
	return w.fill(st.Size(), f.Read)
}

// fill reads a file that had size bytes into the worker's buffer, with
// read (package os's, or the bare descriptor's), and returns what may be
// searched. It asks one byte more than the size, to see the end in one
// read, and grows the buffer when the file grew, up to the size limit.
func (w *grepWorker) fill(size int64, read func([]byte) (int, error)) (content []byte, ok, large bool) {
	if want := int(size) + 1; cap(w.buf) < want {
		w.buf = make([]byte, max(want, 64<<10))
	}
	buf := w.buf[:cap(w.buf)]
	n := 0
	for {
		if n == len(buf) { // the file grew
			if n > maxGrepFile {
				return nil, false, false
			}
			grown := make([]byte, min(2*len(buf), maxGrepFile+1))
			copy(grown, buf)
			buf, w.buf = grown, grown
		}
		m, err := read(buf[n:])
		if err != nil && err != io.EOF {
			return nil, false, false
		}
		n += m
		// A read short of what was asked, at the size the file had, has
		// met the end: no need for one more read to hear it.
		if m == 0 || err == io.EOF || n == int(size) && n < len(buf) {
			break
		}
	}
	return searchable(buf[:n])
}

// searchable returns content when it may be searched: not over the size
// limit (a file that grew while read) and without a NUL byte in its
// first bytes.
func searchable(content []byte) ([]byte, bool, bool) {
	n := len(content)
	if n > maxGrepFile || bytes.IndexByte(content[:min(n, sniffLen)], 0) >= 0 {
		return nil, false, false
	}
	return content, true, false
}

// format returns the output lines of the matched lines w.matched of
// content and their context, ripgrep style: "name:12:text" for a match,
// "name-13-text" for context, in groups that a "--" separates when
// context was asked for. It stops once the lines are more than the output
// can take: offset and head_limit lines, or budget bytes past offset.
func (w *grepWorker) format(content []byte, name string, q *grepQuery, budget int64) [][]string {
	w.starts = append(w.starts[:0], lineStarts(content)...)
	starts := w.starts
	line := func(l int) []byte {
		end := len(content)
		if l+1 < len(starts) {
			end = starts[l+1] - 1
		}
		b := content[starts[l]:end]
		b = bytes.TrimSuffix(b, []byte("\n"))
		return bytes.TrimSuffix(b, []byte("\r"))
	}
	// The matched lines' numbers, 0-based: offsets to lines in one pass.
	nums := make([]int, len(w.matched))
	l := 0
	for i, off := range w.matched {
		for starts[l] < off {
			l++
		}
		nums[i] = l
	}
	maxLines := -1
	if q.headLimit > 0 {
		maxLines = q.offset + q.headLimit + 1
	}
	var (
		groups   [][]string
		produced int   // lines and separators
		bytesOut int64 // their bytes past offset
		end      = -1  // last line emitted
		k        = 0   // index in nums of the next match at or after a line
	)
	full := func(s string) bool {
		produced++
		if produced > q.offset {
			bytesOut += int64(len(s) + 1)
		}
		return (maxLines >= 0 && produced >= maxLines) || bytesOut > budget
	}
	for _, m := range nums {
		from, to := max(m-q.before, 0), min(m+q.after, len(starts)-1)
		if from <= end {
			from = end + 1
		} else {
			// The first group's separator depends on earlier files: it
			// is not counted, so that enough lines are made.
			if len(groups) > 0 && (q.before > 0 || q.after > 0) && full("--") {
				return groups
			}
			groups = append(groups, nil)
		}
		for l := from; l <= to; l++ {
			for k < len(nums) && nums[k] < l {
				k++
			}
			sep := "-"
			if k < len(nums) && nums[k] == l {
				sep = ":"
			}
			text := line(l)
			var more string
			if len(text) > maxGrepLineLen {
				cut := cutUTF8(string(text[:maxGrepLineLen+1]), maxGrepLineLen)
				more = " ... [" + size(int64(len(text)-len(cut))) + " more]"
				text = []byte(cut)
			}
			var s string
			if q.lineNums {
				s = name + sep + strconv.Itoa(l+1) + sep + string(text) + more
			} else {
				s = name + sep + string(text) + more
			}
			groups[len(groups)-1] = append(groups[len(groups)-1], s)
			if full(s) {
				return groups
			}
		}
		end = max(end, to)
	}
	return groups
}

// grepOutput collects output lines, applying offset, head_limit and the
// byte budget.
type grepOutput struct {
	b      strings.Builder
	budget int64
	skip   int  // lines still to skip (offset)
	limit  int  // head_limit; 0 means none
	n      int  // lines written
	seen   int  // lines offered, skipped or written
	more   bool // a line was refused by head_limit
	cut    bool // a line was refused by the budget
}

// started reports whether any line was offered yet.
func (o *grepOutput) started() bool { return o.seen > 0 }

// add writes line unless it is skipped; it reports false when no more
// lines fit.
func (o *grepOutput) add(line string) bool {
	o.seen++
	if o.skip > 0 {
		o.skip--
		return true
	}
	if o.limit > 0 && o.n >= o.limit {
		o.more = true
		return false
	}
	if int64(o.b.Len()+len(line)+1) > o.budget {
		o.cut = true
		return false
	}
	o.b.WriteString(line)
	o.b.WriteByte('\n')
	o.n++
	return true
}
