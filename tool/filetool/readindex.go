package filetool

import (
	"bufio"
	"io"
	"os"
	"sort"
	"sync"
)

// The line index of a large file: where, as Reads of it pass through,
// its newlines stand, so that a later Read of its end (or middle) starts
// close to the lines it shows instead of counting from the start, and
// knows the file's line count without reading the rest.
const (
	indexMinSize = 4 << 20 // smaller files are read whole each time
	indexEvery   = 8 << 20 // a mark about every 8 MiB
	indexFiles   = 16      // files remembered per Read tool
)

// lineMark says that lines newlines come before byte off.
type lineMark struct {
	lines int
	off   int64
}

// lineIndex is what is known of one version of one file.
type lineIndex struct {
	info  os.FileInfo // the version: same file, size and time
	mu    sync.Mutex
	marks []lineMark // by off
	lines int        // its line count, when known
	known bool
}

// lineIndexes holds the indexes of the files one Read tool read lately.
type lineIndexes struct {
	off   bool // no index at all: the tests' reference
	mu    sync.Mutex
	files map[string]*lineIndex
	order []string // least recently used first
}

// get returns the index of the file at abs as st describes it, a new one
// when the file changed (or was never read); nil for a small file.
func (x *lineIndexes) get(abs string, st os.FileInfo) *lineIndex {
	if st.Size() < indexMinSize || x.off {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.files == nil {
		x.files = map[string]*lineIndex{}
	}
	idx := x.files[abs]
	if idx == nil || !os.SameFile(idx.info, st) || idx.info.Size() != st.Size() || !idx.info.ModTime().Equal(st.ModTime()) {
		idx = &lineIndex{info: st}
		x.files[abs] = idx
	}
	for i, p := range x.order {
		if p == abs {
			x.order = append(x.order[:i], x.order[i+1:]...)
			break
		}
	}
	x.order = append(x.order, abs)
	if len(x.order) > indexFiles {
		delete(x.files, x.order[0])
		x.order = x.order[1:]
	}
	return idx
}

// before returns the last mark with at most n newlines before it.
func (idx *lineIndex) before(n int) (lineMark, bool) {
	if idx == nil {
		return lineMark{}, false
	}
	idx.mu.Lock()
	defer idx.mu.Unlock()
	i := sort.Search(len(idx.marks), func(i int) bool { return idx.marks[i].lines > n })
	if i == 0 {
		return lineMark{}, false
	}
	return idx.marks[i-1], true
}

func (idx *lineIndex) add(m lineMark) {
	if idx == nil {
		return
	}
	idx.mu.Lock()
	defer idx.mu.Unlock()
	i := sort.Search(len(idx.marks), func(i int) bool { return idx.marks[i].off >= m.off })
	if i < len(idx.marks) && idx.marks[i].off == m.off {
		return
	}
	if i > 0 && m.off-idx.marks[i-1].off < indexEvery {
		return // one close enough is known
	}
	idx.marks = append(idx.marks, lineMark{})
	copy(idx.marks[i+1:], idx.marks[i:])
	idx.marks[i] = m
}

func (idx *lineIndex) total() (int, bool) {
	if idx == nil {
		return 0, false
	}
	idx.mu.Lock()
	defer idx.mu.Unlock()
	return idx.lines, idx.known
}

// setCounted sets what the first count found: marks, in order, and the
// line count.
func (idx *lineIndex) setCounted(marks []lineMark, lines int) {
	if idx == nil {
		return
	}
	idx.mu.Lock()
	defer idx.mu.Unlock()
	idx.marks, idx.lines, idx.known = marks, lines, true
}

func (idx *lineIndex) setTotal(n int) {
	if idx == nil {
		return
	}
	idx.mu.Lock()
	defer idx.mu.Unlock()
	idx.lines, idx.known = n, true
}

// lineScan is the reader under a Read's bufio.Reader: it counts the bytes
// read, so that the offset of what the bufio.Reader hands out next is
// known, and records marks in the index as skipLines passes buffers.
type lineScan struct {
	src   io.Reader
	br    *bufio.Reader
	idx   *lineIndex
	off   int64 // bytes read from src, plus where src starts in the file
	lines int   // newlines before where the current skipLines started
}

func (s *lineScan) Read(p []byte) (int, error) {
	n, err := s.src.Read(p)
	s.off += int64(n)
	return n, err
}

// mark is skipLines' callback: count newlines have passed since s.lines.
func (s *lineScan) mark(count int) {
	if s.idx == nil {
		return
	}
	s.idx.add(lineMark{lines: s.lines + count, off: s.off - int64(s.br.Buffered())})
}
