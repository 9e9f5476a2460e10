package fs

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/troupe-dev/troupe/tool"
)

// search runs q over files and formats the result.
func (g *Grep) search(ctx context.Context, q grepQuery, base string, files []found, withheld int) (tool.Result, error) {
	if q.mode == "files_with_matches" {
		sortByMtime(files)
	} else {
		sort.Slice(files, func(i, j int) bool { return files[i].abs < files[j].abs })
	}
	out := &grepOutput{budget: g.cfg.MaxReadBytes, skip: q.offset, limit: q.headLimit}
	var (
		skippedLarge           int
		matchedFiles, matchSum int
		counts                 []string
		separate               = q.before > 0 || q.after > 0
		stopped                bool
	)
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return tool.Result{}, err
		}
		content, ok, large := g.cfg.readGrepFile(f.abs)
		if large {
			skippedLarge++
		}
		if !ok {
			continue
		}
		fm := fileMatches{content: content}
		fm.find(q.re, q.multiline, q.mode == "files_with_matches")
		if len(fm.matched) == 0 {
			continue
		}
		matchedFiles++
		matchSum += len(fm.matched)
		name := g.cfg.display(f.abs)
		switch q.mode {
		case "files_with_matches":
			counts = append(counts, name)
		case "count":
			counts = append(counts, fmt.Sprintf("%s:%d", name, len(fm.matched)))
		case "content":
			if !fm.emit(out, name, q, separate) {
				stopped = true
			}
		}
		if stopped {
			break
		}
	}
	if matchedFiles == 0 {
		msg := fmt.Sprintf("No matches found for %q in %s", q.pattern, base)
		return tool.Result{Content: msg + largeNote(skippedLarge) + withheldNote(withheld)}, nil
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

// readGrepFile reads a file to search. ok is false for a file that cannot
// be read, looks binary (a NUL byte in its first bytes), or is too large
// (then large is true).
// A file whose real path Confine refuses (a link swapped in, or one
// leading where the search may not look) is not read either.
func (c Config) readGrepFile(abs string) (content string, ok, large bool) {
	f, err := os.Open(abs)
	if err != nil {
		return "", false, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return "", false, false
	}
	if st.Size() > maxGrepFile {
		return "", false, true
	}
	if _, ok := c.confineFile("Grep", abs, f); !ok {
		return "", false, false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxGrepFile+1))
	if err != nil || len(data) > maxGrepFile || looksBinary(data[:min(len(data), sniffLen)], false) {
		return "", false, false
	}
	return string(data), true, false
}

// fileMatches is the search of one file.
type fileMatches struct {
	content string
	lines   []string // without "\n" or "\r\n"
	matched []int    // 0-based indexes of lines holding (part of) a match, ascending
}

// find fills lines and matched. In line mode each line is matched on its
// own; in multiline mode re runs over the whole content and every line a
// match touches counts. firstOnly stops at the first matched line.
func (fm *fileMatches) find(re *regexp.Regexp, multiline, firstOnly bool) {
	fm.lines = strings.Split(fm.content, "\n")
	if n := len(fm.lines); n > 0 && fm.lines[n-1] == "" {
		fm.lines = fm.lines[:n-1]
	}
	for i, l := range fm.lines {
		fm.lines[i] = strings.TrimSuffix(l, "\r")
	}
	if !multiline {
		for i, l := range fm.lines {
			if re.MatchString(l) {
				fm.matched = append(fm.matched, i)
				if firstOnly {
					return
				}
			}
		}
		return
	}
	locs := re.FindAllStringIndex(fm.content, -1)
	if len(locs) == 0 || len(fm.lines) == 0 {
		return
	}
	starts := make([]int, 0, len(fm.lines))
	off := 0
	for _, l := range strings.SplitAfter(fm.content, "\n")[:len(fm.lines)] {
		starts = append(starts, off)
		off += len(l)
	}
	lineOf := func(pos int) int {
		return sort.Search(len(starts), func(i int) bool { return starts[i] > pos }) - 1
	}
	last := -1
	for _, loc := range locs {
		from, to := lineOf(loc[0]), lineOf(max(loc[1]-1, loc[0]))
		for l := max(from, last+1); l <= to; l++ {
			fm.matched = append(fm.matched, l)
			last = l
		}
		if firstOnly && last >= 0 {
			return
		}
	}
}

// emit writes the matched lines and their context to out, ripgrep style:
// "name:12:text" for a match, "name-13-text" for context, "--" between
// groups that are not adjacent (when context was asked for). It reports
// false when out is full.
func (fm *fileMatches) emit(out *grepOutput, name string, q grepQuery, separate bool) bool {
	isMatch := make(map[int]bool, len(fm.matched))
	for _, m := range fm.matched {
		isMatch[m] = true
	}
	end := -1 // last line emitted
	for _, m := range fm.matched {
		from, to := max(m-q.before, 0), min(m+q.after, len(fm.lines)-1)
		if from <= end {
			from = end + 1
		} else if separate && out.started() && !out.add("--") {
			return false
		}
		for l := from; l <= to; l++ {
			sep := "-"
			if isMatch[l] {
				sep = ":"
			}
			text := fm.lines[l]
			if len(text) > maxGrepLineLen {
				text = cutUTF8(text, maxGrepLineLen) + fmt.Sprintf(" ... [%s more]", size(int64(len(text)-len(cutUTF8(text, maxGrepLineLen)))))
			}
			var line string
			if q.lineNums {
				line = name + sep + fmt.Sprint(l+1) + sep + text
			} else {
				line = name + sep + text
			}
			if !out.add(line) {
				return false
			}
		}
		end = max(end, to)
	}
	return true
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
