package filetool

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// walkFunc receives one regular file (or symbolic link to one) found by
// walkFiles: its absolute path and its slash-separated path relative to
// the walk's start.
type walkFunc func(abs, rel string) error

// walkFiles calls fn for the regular files below start (an absolute
// directory), in the lexical order of their paths (a folder's files come
// where its name followed by '/' sorts among its siblings, so that a
// folder "a" comes after a file "a.go"). It never descends
// into .git or into symbolic links to directories, and skips what the
// .gitignore files in force exclude: those of start and its subdirectories,
// and those of start's ancestors up to the ignore top (see ignoreTop), plus
// .git/info/exclude there. maxDepth > 0 stops at that many levels below
// start. Unreadable subdirectories are skipped; ctx is checked once per
// directory.
func walkFiles(ctx context.Context, start, root string, maxDepth int, fn walkFunc) error {
	relStart, stack, err := startIgnores(start, root)
	if err != nil {
		return err
	}
	w := &walk{maxDepth: maxDepth, fn: fn}
	return w.dir(ctx, start, relStart, "", 0, stack, true)
}

// startIgnores returns start's slash-separated path relative to the
// ignore top (see ignoreTop; "" for the top itself) and the ignore files
// in force in start before its own .gitignore: .git/info/exclude and the
// .gitignore files of start's ancestors up to the top, from the top down.
func startIgnores(start, root string) (relStart string, stack ignoreStack, err error) {
	top := ignoreTop(start, root)
	relStart, err = filepath.Rel(top, start)
	if err != nil {
		return "", nil, err
	}
	relStart = filepath.ToSlash(relStart)
	if relStart == "." {
		relStart = ""
	}
	if st, err := os.Stat(filepath.Join(top, ".git")); err == nil && st.IsDir() {
		if f := loadIgnore(filepath.Join(top, ".git", "info", "exclude"), ""); f != nil {
			stack = append(stack, f)
		}
	}
	if relStart != "" {
		dir, rel := top, ""
		if f := loadIgnore(filepath.Join(dir, ".gitignore"), rel); f != nil {
			stack = append(stack, f)
		}
		segs := strings.Split(relStart, "/")
		for _, seg := range segs[:len(segs)-1] {
			dir, rel = filepath.Join(dir, seg), join(rel, seg)
			if f := loadIgnore(filepath.Join(dir, ".gitignore"), rel); f != nil {
				stack = append(stack, f)
			}
		}
	}
	return relStart, stack, nil
}

// walk is the state of one walkFiles call.
type walk struct {
	maxDepth int
	fn       walkFunc
	buf      []byte     // the folder reader's scratch space
	scratch  []byte     // paths built for ignore rules
	ents     [][]dirEnt // the entries of the folders being walked, by depth
}

// dir walks the directory abs, whose path is topRel relative to the ignore
// top and rel relative to the start.
func (w *walk) dir(ctx context.Context, abs, topRel, rel string, depth int, stack ignoreStack, isStart bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	prefix := abs
	if !strings.HasSuffix(prefix, sepString) {
		prefix += sepString
	}
	entries, err := w.readDirSorted(prefix, depth)
	if err != nil {
		if isStart {
			return err
		}
		return nil // an unreadable subdirectory is skipped
	}
	for _, d := range entries {
		if d.name == ".gitignore" {
			if f := loadIgnore(prefix+".gitignore", topRel); f != nil {
				stack = append(stack[:len(stack):len(stack)], f)
			}
			break
		}
	}
	for _, d := range entries {
		name := d.name
		if name == ".git" || d.kind == kindOther {
			continue // devices, pipes, sockets: never read them
		}
		isDir := d.kind == kindDir
		if stack.ignoredIn(topRel, name, isDir, &w.scratch) {
			continue
		}
		if isDir {
			if w.maxDepth > 0 && depth+1 >= w.maxDepth {
				continue
			}
			if err := w.dir(ctx, prefix+name, join(topRel, name), join(rel, name), depth+1, stack, false); err != nil {
				return err
			}
			continue
		}
		if err := w.fn(prefix+name, join(rel, name)); err != nil {
			return err
		}
	}
	return nil
}

// readDirSorted returns the entries of the folder whose path with a
// separator after it is prefix, sorted by name, a folder's name with a
// '/' after it, so that walking them in order yields paths in lexical
// order. Its kinds are settled: an entry the folder did not type is
// lstat'ed, and a link is a file (kindFile) when it leads to a regular
// file, else kindOther. The slice is the walk's for this depth: valid
// until the next folder at this depth is read.
func (w *walk) readDirSorted(prefix string, depth int) ([]dirEnt, error) {
	d, err := openScanDir(prefix)
	if err != nil {
		return nil, err
	}
	defer d.close()
	for len(w.ents) <= depth {
		w.ents = append(w.ents, nil)
	}
	entries, err := d.entries(&w.buf, w.ents[depth][:0], false)
	w.ents[depth] = entries
	if err != nil {
		return nil, err
	}
	for i := range entries {
		e := &entries[i]
		if e.kind == kindUnknown {
			if _, e.kind, err = d.lstat(e); err != nil {
				e.kind = kindOther // gone since it was listed
			}
		}
		if e.kind == kindLink {
			e.kind = kindOther
			if d.regular(e.name) {
				e.kind = kindFile
			}
		}
	}
	slices.SortFunc(entries, func(a, b dirEnt) int {
		return compareEntryNames(a.name, a.kind == kindDir, b.name, b.kind == kindDir)
	})
	return entries, nil
}

// compareEntryNames compares two names of one folder as if each folder's
// name had a '/' after it.
func compareEntryNames(a string, aDir bool, b string, bDir bool) int {
	n := min(len(a), len(b))
	if c := strings.Compare(a[:n], b[:n]); c != 0 {
		return c
	}
	// One is a prefix of the other; the next byte of each is its own,
	// or '/' for a folder's end, or none.
	next := func(s string, dir bool) int {
		switch {
		case len(s) > n:
			return int(s[n])
		case dir:
			return '/'
		}
		return -1
	}
	return next(a, aDir) - next(b, bDir)
}

// loadIgnore reads and parses an ignore file, or returns nil if there is
// none (or it has no rules).
func loadIgnore(path, base string) *ignoreFile {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, maxIgnoreFile))
	ig := parseIgnore(base, data)
	if len(ig.rules) == 0 {
		return nil
	}
	return ig
}

// ignoreTop returns the directory whose .gitignore is the outermost in
// force for a walk of start: the nearest ancestor of start (or start
// itself) holding a .git, else root when start is inside root, else start.
func ignoreTop(start, root string) string {
	for d := start; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if within(root, start) {
		return root
	}
	return start
}

// within reports whether path is dir or below it (both clean and absolute).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// join joins slash-separated relative paths where dir may be "".
func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
