package task

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestOpenOutputRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "victim")
	os.WriteFile(target, []byte("precious"), 0o644)
	link := filepath.Join(dir, "b12345678.output")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	o, err := OpenOutput(link, 0)
	if !errors.Is(err, ErrSymlink) {
		if o != nil {
			o.Close()
		}
		t.Fatalf("OpenOutput(symlink) = %v; want ErrSymlink", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "precious" {
		t.Errorf("target = %q; want it untouched", b)
	}
	// A dangling symlink must not create its target either.
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "created"), dangling)
	if _, err := OpenOutput(dangling, 0); !errors.Is(err, ErrSymlink) {
		t.Errorf("OpenOutput(dangling symlink) = %v; want ErrSymlink", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "created")); err == nil {
		t.Error("OpenOutput created the symlink's target")
	}
}

func TestOpenOutputMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o")
	o, err := OpenOutput(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
	fi, _ := os.Stat(path)
	if m := fi.Mode().Perm(); m != 0o600 {
		t.Errorf("mode = %v; want 0600", m)
	}
}

func TestOutputCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o")
	o, err := OpenOutput(path, 100)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if n, err := o.Write(bytes.Repeat([]byte("x"), 60)); n != 60 || err != nil {
			t.Fatalf("Write = %d, %v; want 60, nil (the writer keeps running)", n, err)
		}
	}
	if err := o.Capture(strings.NewReader(strings.Repeat("y", 1000))); err != nil {
		t.Fatalf("Capture past the cap = %v", err)
	}
	o.Close()
	b, _ := os.ReadFile(path)
	want := strings.Repeat("x", 100) + TruncatedMarker(100)
	if string(b) != want {
		t.Errorf("file = %q; want %q", b, want)
	}
	if n := strings.Count(string(b), "output truncated"); n != 1 {
		t.Errorf("%d markers; want 1", n)
	}
}

func TestReadOutputByOffset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o")
	os.WriteFile(path, []byte("0123456789"), 0o600)
	tests := []struct {
		off, max int64
		want     string
	}{
		{0, 100, "0123456789"}, {3, 100, "3456789"}, {3, 2, "34"}, {10, 5, ""}, {20, 5, ""},
	}
	for _, tt := range tests {
		got, err := ReadOutput(path, tt.off, tt.max)
		if err != nil || string(got) != tt.want {
			t.Errorf("ReadOutput(%d, %d) = %q, %v; want %q", tt.off, tt.max, got, err, tt.want)
		}
	}
	link := path + ".link"
	os.Symlink(path, link)
	if _, err := ReadOutput(link, 0, 10); err == nil {
		t.Error("ReadOutput(symlink) = nil error; want a refusal")
	}
}

func TestOutputDir(t *testing.T) {
	temp := t.TempDir()
	dir, err := OutputDir(temp, "proj", "sess")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(temp, "troupe-"+strconv.Itoa(os.Getuid()), "proj", "sess", "tasks"); dir != want {
		t.Errorf("OutputDir = %q; want %q", dir, want)
	}
	for _, bad := range [][2]string{{"..", "s"}, {"p", "a/b"}, {"", "s"}} {
		if _, err := OutputDir(temp, bad[0], bad[1]); err == nil {
			t.Errorf("OutputDir(%q, %q) = nil error; want a refusal", bad[0], bad[1])
		}
	}
	// A planted symlink in place of the per-user folder is refused.
	temp2 := t.TempDir()
	os.Symlink(t.TempDir(), filepath.Join(temp2, "troupe-"+strconv.Itoa(os.Getuid())))
	if _, err := OutputDir(temp2, "p", "s"); err == nil {
		t.Error("OutputDir through a planted symlink = nil error; want a refusal")
	}
	// So is one in place of a folder below it: the project, the session or
	// the tasks folder.
	user := filepath.Join(temp, "troupe-"+strconv.Itoa(os.Getuid()))
	for _, rel := range []string{"p1", "p2/s", "p3/s/tasks"} {
		link := filepath.Join(user, rel)
		if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
			t.Fatal(err)
		}
		elsewhere := t.TempDir()
		if err := os.Symlink(elsewhere, link); err != nil {
			t.Fatal(err)
		}
		parts := strings.SplitN(rel+"/s/x", "/", 3)
		_, err := OutputDir(temp, parts[0], "s")
		if !errors.Is(err, ErrSymlink) || !strings.Contains(err.Error(), link) {
			t.Errorf("OutputDir with %s a symlink = %v; want ErrSymlink naming it", rel, err)
		}
		if des, _ := os.ReadDir(elsewhere); len(des) != 0 {
			t.Errorf("OutputDir wrote through the symlink %s", rel)
		}
	}
}
