//go:build unix

package filetool

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCountMappedShrank counts past the end of a file, as when the file
// is cut shorter while it is mapped: the fault that reading the missing
// pages raises is caught and reported, not a crash.
func TestCountMappedShrank(t *testing.T) {
	p := filepath.Join(t.TempDir(), "short.log")
	page := os.Getpagesize()
	if err := os.WriteFile(p, make([]byte, page), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := mapFile(int(f.Fd()), 0, int64(4*page)) // as if the file had been 4 pages long
	if err != nil {
		t.Fatal(err)
	}
	defer unmapFile(data)
	whole := []span{{0, int64(4 * page)}}
	if n, err := countSpans(data, 0, whole, 0, int64(page)); err != nil || n != 0 {
		t.Fatalf("countSpans(the whole file) = %d, %v; want 0, nil", n, err)
	}
	if _, err := countSpans(data, 0, whole, 0, int64(4*page)); !errors.Is(err, errShrank) {
		t.Fatalf("countSpans(past the end) error = %v; want errShrank", err)
	}
}

// TestIndexLinesUnmappable counts through a descriptor that cannot be
// mapped for reading: the error is not errShrank (so a Read counts as it
// reads instead), and no line count is set.
func TestIndexLinesUnmappable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.log")
	if err := os.WriteFile(p, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	idx := &lineIndex{info: st}
	err = indexLines(t.Context(), f, st.Size(), idx)
	if err == nil || errors.Is(err, errShrank) {
		t.Fatalf("indexLines(write-only file) = %v; want a mapping error", err)
	}
	if _, known := idx.total(); known {
		t.Error("a failed count set the line count")
	}
}
