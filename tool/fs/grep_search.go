package fs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
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
func (g *Grep) search(ctx context.Context, q grepQuery, base string, files []found, withheld int) (tool.Result, error) {
	sort.Slice(files, func(i, j int) bool { return files[i].abs < files[j].abs })
	out := &grepOutput{budget: g.cfg.MaxReadBytes, skip: q.offset, limit: q.headLimit}
	var (
		skippedLarge           int
		matchedFiles, matchSum int
		matched                []found
		counts                 []string
		separate               = q.before > 0 || q.after > 0
	)
	err := g.searchFiles(ctx, &q, files, func(i int, r *fileResult) bool {
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
			matched = append(matched, files[i])
		case "count":
			counts = append(counts, g.cfg.display(files[i].abs)+":"+strconv.Itoa(r.matched))
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
	if err != nil {
		return tool.Result{}, err
	}
	if matchedFiles == 0 {
		msg := fmt.Sprintf("No matches found for %q in %s", q.pattern, base)
		return tool.Result{Content: msg + largeNote(skippedLarge) + withheldNote(withheld)}, nil
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
	return tool.Result{Content: strings.TrimSuffix(b.String()+largeNote(skippedLarge)+withheldNote(withheld), "\n")}, nil
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

// searchFiles searches files on parallel workers and calls each with the
// result of every file in order, from the goroutine that called it, until
// each returns false. Workers take the files in order, in chunks, and a
// result waits until those before it are handed over. It returns ctx's
// error if ctx ends first, after the workers have stopped.
func (g *Grep) searchFiles(ctx context.Context, q *grepQuery, files []found, each func(i int, r *fileResult) bool) error {
	n := len(files)
	if n == 0 {
		return ctx.Err()
	}
	workers := min(runtime.GOMAXPROCS(0), n)
	chunk := max(1, min(64, n/(workers*16)))
	chunks := (n + chunk - 1) / chunk
	results := make([]fileResult, n)
	done := make(chan int, chunks) // finished chunks; never blocks a worker
	var (
		next atomic.Int64
		stop atomic.Bool
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			var w grepWorker
			for !stop.Load() && ctx.Err() == nil {
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				for i := c * chunk; i < min(n, (c+1)*chunk); i++ {
					results[i] = w.search(g.cfg, q, files[i].abs)
				}
				done <- c
			}
		})
	}
	defer wg.Wait()
	defer stop.Store(true)
	ready := make([]bool, chunks)
	for cursor := 0; cursor < chunks; {
		select {
		case c := <-done:
			ready[c] = true
		case <-ctx.Done():
			return ctx.Err()
		}
		for ; cursor < chunks && ready[cursor]; cursor++ {
			for i := cursor * chunk; i < min(n, (cursor+1)*chunk); i++ {
				if !each(i, &results[i]) {
					return nil
				}
				results[i] = fileResult{}
			}
		}
	}
	return nil
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
	// One byte more than the size, to see the end in one read.
	if want := int(st.Size()) + 1; cap(w.buf) < want {
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
		m, err := f.Read(buf[n:])
		n += m
		if err == io.EOF || (err == nil && m == 0) {
			break
		}
		if err != nil {
			return nil, false, false
		}
	}
	content = buf[:n]
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
