package filetool

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// FuzzParseDirents feeds the getdents parser what a real folder gives
// and arbitrary bytes: it may not panic, and every name it gives is a
// name a folder can hold.
func FuzzParseDirents(f *testing.F) {
	dir := f.TempDir()
	for _, name := range []string{"a.go", ".hidden", "é", strings.Repeat("n", 255)} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		f.Fatal(err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		f.Fatal(err)
	}
	buf := make([]byte, 8192)
	n, err := unix.Getdents(fd, buf)
	unix.Close(fd)
	if err != nil {
		f.Fatal(err)
	}
	real := parseDirents(buf[:n], nil, false)
	var names []string
	for _, e := range real {
		names = append(names, e.name)
	}
	slices.Sort(names)
	want := []string{".hidden", "a.go", "sub", "é", strings.Repeat("n", 255)}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		f.Fatalf("parseDirents(a real folder) = %q; want %q", names, want)
	}
	f.Add(buf[:n])
	f.Add(buf[:n/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		copied := parseDirents(b, nil, false)
		borrowed := parseDirents(b, nil, true)
		if !slices.Equal(copied, borrowed) {
			t.Fatalf("parseDirents(%q) gives %v copied and %v borrowed", b, copied, borrowed)
		}
		for _, ents := range [][]dirEnt{copied, borrowed} {
			for _, e := range ents {
				if e.name == "" || e.name == "." || e.name == ".." || strings.IndexByte(e.name, 0) >= 0 {
					t.Fatalf("parseDirents(%q) gave the name %q", b, e.name)
				}
				// fstatatNoFollow passes the name where it lies: a NUL
				// must follow it there.
				if !e.nul || *(*byte)(unsafe.Add(unsafe.Pointer(unsafe.StringData(e.name)), len(e.name))) != 0 {
					t.Fatalf("parseDirents(%q) gave the name %q without its NUL after it", b, e.name)
				}
			}
		}
	})
}
