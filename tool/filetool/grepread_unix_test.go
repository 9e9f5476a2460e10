//go:build unix

package filetool

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadFD checks Grep's bare-descriptor read: a file whole, an empty
// one, a pipe put where a file was (which must not hang the search), a
// binary file, and a file over the size limit.
func TestReadFD(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	text := write("a.txt", []byte("one\ntwo\n"))
	empty := write("empty.txt", nil)
	bin := write("b.bin", []byte("a\x00b"))
	big := filepath.Join(dir, "big.txt")
	if f, err := os.Create(big); err != nil {
		t.Fatal(err)
	} else {
		f.Truncate(maxGrepFile + 1)
		f.Close()
	}
	fifo := filepath.Join(dir, "pipe")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	var w grepWorker
	tests := []struct {
		path      string
		want      string
		ok, large bool
	}{
		{text, "one\ntwo\n", true, false},
		{empty, "", true, false},
		{bin, "", false, false},
		{big, "", false, true},
		{fifo, "", false, false},
		{filepath.Join(dir, "missing"), "", false, false},
	}
	for _, tt := range tests {
		got, ok, large := w.readFD(Config{}, tt.path)
		if string(got) != tt.want || ok != tt.ok || large != tt.large {
			t.Errorf("readFD(%s) = %q, %v, %v; want %q, %v, %v", filepath.Base(tt.path), got, ok, large, tt.want, tt.ok, tt.large)
		}
	}
}
