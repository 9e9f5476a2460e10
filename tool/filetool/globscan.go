package filetool

import (
	"context"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// A Glob scan walks a tree like walkFiles (same ignore rules, no .git, no
// links to folders) but in no particular order, on parallel goroutines,
// and reads the modification time of the matching files as it finds them,
// through the open folder; it keeps only the newest of them, as Glob
// shows only those. Glob's output is sorted newest first, then by path,
// so the walk order does not show.

// entKind is what a folder entry is, as its folder tells (or, when the
// file system does not say, as lstat tells).
type entKind uint8

const (
	kindOther   entKind = iota // device, pipe, socket: never listed
	kindFile                   // regular file
	kindDir                    // folder
	kindLink                   // symbolic link
	kindUnknown                // the folder did not say: lstat it
)

// dirEnt is one entry of a folder.
type dirEnt struct {
	name string
	kind entKind
	// nul says a NUL byte follows name in memory (on Linux the names
	// point into the copy of what getdents filled), so that a system call
	// can take the name as it is, without a copy.
	nul bool
}

// scanDir is a folder open for a Glob scan. The implementation on Linux
// reads its entries with getdents into a reused buffer and stats files
// relative to the open folder; the portable one uses package os.
type scanDir interface {
	// entries appends the folder's entries, but "." and "..", to ents;
	// buf is scratch space the implementation may reuse across calls.
	// With borrow set the names may lie in *buf, valid only until the
	// next call that is given buf; without it they are copied out.
	entries(buf *[]byte, ents []dirEnt, borrow bool) ([]dirEnt, error)
	// lstat returns the modification time and kind of an entry entries
	// gave, not following a link.
	lstat(e *dirEnt) (mtime, entKind, error)
	// regular reports whether the entry, a link followed, is a regular
	// file.
	regular(name string) bool
	close()
}

// mtime is a modification time: seconds and nanoseconds since 1970.
type mtime struct{ sec, nsec int64 }

// noTime is the time of a file whose lstat failed: older than any other,
// as the zero time.Time was in the sort that came before.
var noTime = mtime{sec: math.MinInt64}

func (m mtime) time() time.Time {
	if m == noTime {
		return time.Time{}
	}
	return time.Unix(m.sec, m.nsec)
}

// globHit is one matching file: the folder's path with a separator after
// it, and the file's name.
type globHit struct {
	dir, name string
	mtime     mtime
}

// newer reports whether a sorts before b in Glob's output: newer first,
// then by path.
func newer(a, b *globHit) bool {
	if a.mtime != b.mtime {
		return a.mtime.sec > b.mtime.sec || a.mtime.sec == b.mtime.sec && a.mtime.nsec > b.mtime.nsec
	}
	return comparePaths(a.dir, a.name, b.dir, b.name) < 0
}

// comparePaths compares ad+an with bd+bn without building them.
func comparePaths(ad, an, bd, bn string) int {
	if ad == bd {
		return strings.Compare(an, bn)
	}
	n := min(len(ad), len(bd))
	if c := strings.Compare(ad[:n], bd[:n]); c != 0 {
		return c
	}
	if len(ad) < len(bd) {
		return compareSplit(an, bd[n:], bn)
	}
	return -compareSplit(bn, ad[n:], an)
}

// compareSplit compares s with t+u.
func compareSplit(s, t, u string) int {
	n := min(len(s), len(t))
	if c := strings.Compare(s[:n], t[:n]); c != 0 {
		return c
	}
	if len(s) < len(t) {
		return -1 // s is a proper prefix of t
	}
	return strings.Compare(s[len(t):], u)
}

// newest keeps the keep newest hits it is given, in a heap whose root is
// the oldest kept.
type newest struct {
	keep int
	hits []globHit
}

// add adds x if it is among the keep newest; x.name may be borrowed (see
// scanDir.entries): a name kept is cloned.
func (h *newest) add(x globHit) {
	if len(h.hits) < h.keep {
		x.name = strings.Clone(x.name)
		h.hits = append(h.hits, x)
		for i := len(h.hits) - 1; i > 0; {
			p := (i - 1) / 2
			if !newer(&h.hits[p], &h.hits[i]) {
				break
			}
			h.hits[p], h.hits[i] = h.hits[i], h.hits[p]
			i = p
		}
		return
	}
	if h.keep == 0 || !newer(&x, &h.hits[0]) {
		return
	}
	x.name = strings.Clone(x.name)
	h.hits[0] = x
	for i := 0; ; {
		old := i
		if l := 2*i + 1; l < len(h.hits) && newer(&h.hits[old], &h.hits[l]) {
			old = l
		}
		if r := 2*i + 2; r < len(h.hits) && newer(&h.hits[old], &h.hits[r]) {
			old = r
		}
		if old == i {
			return
		}
		h.hits[i], h.hits[old] = h.hits[old], h.hits[i]
		i = old
	}
}

// globScan is one Glob walk.
type globScan struct {
	open     func(abs string) (scanDir, error)
	match    *globMatcher
	withhold func(abs string) bool // nil: nothing is withheld
	maxDepth int                   // > 0: levels below the start to walk
	keep     int                   // how many of the newest files to keep

	mu sync.Mutex
	// wake is signalled when jobs are added or the scan ends.
	wake *sync.Cond
	// jobs are the folders found and not yet taken; guarded by mu.
	jobs []*scanJob
	// busy is how many workers are on a folder; guarded by mu.
	busy int
	// err ends the scan (the context's); guarded by mu.
	err error
}

// scanJob is one folder to list.
type scanJob struct {
	prefix string // its absolute path with a separator after it
	topRel string // slash-separated, relative to the ignore top
	rel    string // slash-separated, relative to the start
	depth  int
	stack  ignoreStack // the ignore files in force, but its own
}

// scanWorker is the state of one goroutine of a scan.
type scanWorker struct {
	buf      []byte
	scratch  []byte
	ents     []dirEnt
	subs     []*scanJob
	found    newest
	total    int // matching files found, withheld ones aside
	withheld int
}

// globResult is what a scan found.
type globResult struct {
	files    []found // the newest keep files, newest first, then by path
	total    int     // every matching file, withheld ones aside
	withheld int
}

// scanGlob scans the tree below start (an absolute, clean folder) for
// the files m matches, with the ignore rules of walkFiles. An unreadable
// start is an error; unreadable folders below it are skipped.
func scanGlob(ctx context.Context, s *globScan, start, root string) (globResult, error) {
	relStart, stack, err := startIgnores(start, root)
	if err != nil {
		return globResult{}, err
	}
	s.wake = sync.NewCond(&s.mu)
	prefix := start
	if !strings.HasSuffix(prefix, sepString) {
		prefix += sepString
	}
	first := &scanWorker{found: newest{keep: s.keep}}
	if err := s.dir(ctx, first, &scanJob{prefix: prefix, topRel: relStart, stack: stack}); err != nil {
		return globResult{}, err
	}
	s.jobs = append(s.jobs, first.subs...)
	workers := []*scanWorker{first}
	if len(s.jobs) > 0 {
		var wg sync.WaitGroup
		for range runtime.GOMAXPROCS(0) - 1 {
			w := &scanWorker{found: newest{keep: s.keep}}
			workers = append(workers, w)
			wg.Go(func() { s.work(ctx, w) })
		}
		s.work(ctx, first)
		wg.Wait()
	}
	if s.err != nil {
		return globResult{}, s.err
	}
	var res globResult
	var hits []globHit
	for _, w := range workers {
		res.total += w.total
		res.withheld += w.withheld
		hits = append(hits, w.found.hits...)
	}
	slices.SortFunc(hits, func(a, b globHit) int {
		switch {
		case newer(&a, &b):
			return -1
		case newer(&b, &a):
			return 1
		}
		return 0
	})
	hits = hits[:min(len(hits), s.keep)]
	res.files = make([]found, len(hits))
	for i, h := range hits {
		res.files[i] = found{abs: h.dir + h.name, mtime: h.mtime.time()}
	}
	return res, nil
}

// work lists folders until none is left and no worker may find more.
func (s *globScan) work(ctx context.Context, w *scanWorker) {
	for {
		s.mu.Lock()
		for len(s.jobs) == 0 && s.busy > 0 && s.err == nil {
			s.wake.Wait()
		}
		if len(s.jobs) == 0 || s.err != nil {
			s.wake.Broadcast()
			s.mu.Unlock()
			return
		}
		j := s.jobs[len(s.jobs)-1]
		s.jobs = s.jobs[:len(s.jobs)-1]
		s.busy++
		s.mu.Unlock()

		err := s.dir(ctx, w, j)
		if err != nil && ctx.Err() == nil {
			err = nil // an unreadable folder is skipped
		}

		s.mu.Lock()
		s.busy--
		if err != nil && s.err == nil {
			s.err = err
		}
		s.jobs = append(s.jobs, w.subs...)
		if len(w.subs) > 0 || s.busy == 0 || s.err != nil {
			s.wake.Broadcast()
		}
		s.mu.Unlock()
	}
}

// dir lists the folder of j: its subfolders go to w.subs, its matching
// files to w.found.
func (s *globScan) dir(ctx context.Context, w *scanWorker, j *scanJob) error {
	clear(w.subs)
	w.subs = w.subs[:0]
	if err := ctx.Err(); err != nil {
		return err
	}
	d, err := s.open(j.prefix)
	if err != nil {
		return err
	}
	defer d.close()
	w.ents, err = d.entries(&w.buf, w.ents[:0], true) // names kept past this folder are cloned
	if err != nil {
		return err
	}
	stack := j.stack
	for _, e := range w.ents {
		if e.name == ".gitignore" {
			if f := loadIgnore(j.prefix+".gitignore", j.topRel); f != nil {
				stack = append(stack[:len(stack):len(stack)], f)
			}
			break
		}
	}
	for i := range w.ents {
		e := &w.ents[i]
		name, kind := e.name, e.kind
		if name == ".git" {
			continue
		}
		t, known := noTime, false
		if kind == kindUnknown {
			if t, kind, err = d.lstat(e); err != nil {
				continue // gone since it was listed
			}
			known = true
		}
		switch kind {
		case kindDir:
			if stack.ignoredIn(j.topRel, name, true, &w.scratch) || s.maxDepth > 0 && j.depth+1 >= s.maxDepth {
				continue
			}
			name = strings.Clone(name) // borrowed, and join may return it as it is
			w.subs = append(w.subs, &scanJob{
				prefix: j.prefix + name + sepString,
				topRel: join(j.topRel, name),
				rel:    join(j.rel, name),
				depth:  j.depth + 1,
				stack:  stack,
			})
			continue
		case kindFile, kindLink:
		default:
			continue // devices, pipes, sockets
		}
		if !s.match.matchIn(j.rel, name, &w.scratch) || stack.ignoredIn(j.topRel, name, false, &w.scratch) {
			continue
		}
		if kind == kindLink && !d.regular(name) {
			continue
		}
		if s.withhold != nil && s.withhold(j.prefix+name) {
			w.withheld++
			continue
		}
		if !known {
			if t, _, err = d.lstat(e); err != nil {
				t = noTime
			}
		}
		w.total++
		w.found.add(globHit{dir: j.prefix, name: name, mtime: t})
	}
	return nil
}
