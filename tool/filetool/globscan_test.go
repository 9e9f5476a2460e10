package filetool

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// refGlob is the Glob search as it was before the parallel scan, kept as
// the reference the scan must agree with: the old walk in order, an lstat
// of each match, a sort of them all by time then path, the first keep.
func refGlob(t *testing.T, start, root string, m *globMatcher, maxDepth, keep int) (files []found, total int) {
	t.Helper()
	err := refWalk(t.Context(), start, root, maxDepth, func(abs, rel string) error {
		if !m.Match(rel) {
			return nil
		}
		f := found{abs: abs}
		if info, err := os.Lstat(abs); err == nil {
			f.mtime = info.ModTime()
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatalf("walkFiles(%s): %v", start, err)
	}
	sortByMtime(files)
	return files[:min(len(files), keep)], len(files)
}

// openers are the scanDir implementations: the one Glob uses here, the
// portable one, and the native one on a file system that does not type
// its entries (as some do not fill d_type), which must all agree.
var openers = map[string]func(string) (scanDir, error){
	"native": openScanDir,
	"os":     openOSDir,
	"untyped": func(prefix string) (scanDir, error) {
		d, err := openScanDir(prefix)
		return untypedDir{d}, err
	},
}

// untypedDir is a scanDir whose entries come without their kinds.
type untypedDir struct{ scanDir }

func (d untypedDir) entries(buf *[]byte, ents []dirEnt, borrow bool) ([]dirEnt, error) {
	n := len(ents)
	ents, err := d.scanDir.entries(buf, ents, borrow)
	for i := n; i < len(ents); i++ {
		ents[i].kind = kindUnknown
	}
	return ents, err
}

// checkScan compares scanGlob with refGlob for one pattern.
func checkScan(t *testing.T, start, root, pat string, keep int) {
	t.Helper()
	m, err := compileGlob(pat)
	if err != nil {
		t.Fatal(err)
	}
	maxDepth := 0
	if !strings.Contains(pat, "**") && !strings.Contains(pat, "{") {
		maxDepth = strings.Count(pat, "/") + 1
	}
	want, wantTotal := refGlob(t, start, root, m, maxDepth, keep)
	for name, open := range openers {
		s := &globScan{open: open, match: m, maxDepth: maxDepth, keep: keep}
		got, err := scanGlob(t.Context(), s, start, root)
		if err != nil {
			t.Fatalf("%s: scanGlob(%s, %q): %v", name, start, pat, err)
		}
		if got.total != wantTotal || !slices.EqualFunc(got.files, want, func(a, b found) bool {
			return a.abs == b.abs && a.mtime.Equal(b.mtime)
		}) {
			t.Errorf("%s: scanGlob(%q, keep %d) = %d of %d:\n%v\nwant %d of %d:\n%v", name, pat, keep,
				len(got.files), got.total, paths(got.files), len(want), wantTotal, paths(want))
		}
	}
}

func paths(files []found) []string {
	var p []string
	for _, f := range files {
		p = append(p, f.abs)
	}
	return p
}

// randomTree writes a tree of folders, files, .gitignore files and links
// whose names and times repeat, so that ignore rules and ties in time
// both come up.
func randomTree(t *testing.T, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	root := t.TempDir()
	names := []string{"a.go", "b.go", "a_test.go", ".env", "x.log", "keep.log", "Makefile", "build", "gen", "node_modules", "a.go.txt", "é.go"}
	rules := []string{"*.log", "!keep.log", "build/", "/gen", "node_modules", "**/deep/*.go", "a_*", "!a_test.go", "*.txt", "sub/"}
	dirs := []string{""}
	for i := 0; i < 60; i++ {
		parent := dirs[rng.IntN(len(dirs))]
		name := names[rng.IntN(len(names))]
		if rng.IntN(6) == 0 {
			name = []string{"deep", "sub", ".hidden", ".git"}[rng.IntN(4)]
		}
		p := filepath.Join(root, parent, name)
		rel := filepath.ToSlash(filepath.Join(parent, name))
		switch r := rng.IntN(10); {
		case r < 3 && strings.Count(rel, "/") < 4:
			if os.MkdirAll(p, 0o755) == nil {
				dirs = append(dirs, rel)
			}
		case r < 4:
			var b strings.Builder
			for range 1 + rng.IntN(3) {
				b.WriteString(rules[rng.IntN(len(rules))] + "\n")
			}
			os.WriteFile(filepath.Join(root, parent, ".gitignore"), []byte(b.String()), 0o644)
		case r < 5:
			os.Symlink(filepath.Join(root, dirs[rng.IntN(len(dirs))]), p) // a link to a folder: never entered
		case r < 6:
			os.Symlink(names[rng.IntN(len(names))], p) // to a file, or dangling
		default:
			os.WriteFile(p, []byte("x"), 0o644)
		}
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
			mt := base.Add(time.Duration(rng.IntN(3)) * time.Second) // many ties
			os.Chtimes(p, mt, mt)
		}
	}
	return root
}

// TestScanMatchesReference checks the parallel scan against the walk it
// replaced on random trees and on the tests' ignore tree, with the
// newest kept few and all kept.
func TestScanMatchesReference(t *testing.T) {
	pats := []string{"**/*.go", "*.go", "**/*", "*", "**/*.{go,log}", "*/*.go", "**/build", "**/deep/**", "[ab].go", "**/.*"}
	roots := []string{ignoreTree(t)}
	for seed := range uint64(12) {
		roots = append(roots, randomTree(t, seed))
	}
	for i, root := range roots {
		for _, pat := range pats {
			for _, keep := range []int{3, 1000} {
				t.Run(fmt.Sprintf("tree%d/%s/keep%d", i, pat, keep), func(t *testing.T) {
					checkScan(t, root, root, pat, keep)
				})
			}
		}
	}
	// A start below the top of the repository, whose ancestors'
	// .gitignore files apply.
	sub := filepath.Join(roots[0], "sub")
	checkScan(t, sub, roots[0], "**/*", 1000)
}

// TestScanGoSource checks the scan against the reference on the Go
// distribution's source tree, when it is there.
func TestScanGoSource(t *testing.T) {
	if _, err := os.Stat(goSrc); err != nil {
		t.Skipf("no Go source tree at %s: %v", goSrc, err)
	}
	for _, pat := range []string{"**/*.go"} {
		checkScan(t, goSrc, goSrc, pat, MaxGlobResults)
	}
}

func TestComparePaths(t *testing.T) {
	parts := []string{"", "a", "a/", "ab", "a/b", "b", "/x/", "/x/a", "é", "a\xff"}
	for _, ad := range parts {
		for _, an := range parts {
			for _, bd := range parts {
				for _, bn := range parts {
					if got, want := comparePaths(ad, an, bd, bn), strings.Compare(ad+an, bd+bn); got != want {
						t.Errorf("comparePaths(%q, %q, %q, %q) = %d; want %d", ad, an, bd, bn, got, want)
					}
				}
			}
		}
	}
}
