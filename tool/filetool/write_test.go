package filetool

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	root := tree(t, file{path: "old.txt", content: "old\n"}, file{path: "dir/x", content: "x"})
	if err := os.Chmod(filepath.Join(root, "old.txt"), 0o750); err != nil {
		t.Fatal(err)
	}
	w := NewWrite(Config{Root: root})
	tests := []struct {
		name, input string
		wantErr     bool
		want        []string
		path        string // checked to hold content afterwards
		content     string
	}{
		{"create with parents", js(map[string]any{"file_path": "a/b/new.txt", "content": "one\ntwo\nthree"}), false,
			[]string{"Created " + filepath.Join(root, "a/b/new.txt"), "wrote 13 bytes (3 lines)"}, "a/b/new.txt", "one\ntwo\nthree"},
		{"overwrite", js(map[string]any{"file_path": filepath.Join(root, "old.txt"), "content": "new\n"}), false,
			[]string{"Overwrote", "wrote 4 bytes (1 line)"}, "old.txt", "new\n"},
		{"empty content", js(map[string]any{"file_path": "empty.txt", "content": ""}), false,
			[]string{"wrote 0 bytes (0 lines)"}, "empty.txt", ""},
		{"directory", js(map[string]any{"file_path": "dir", "content": "x"}), true,
			[]string{filepath.Join(root, "dir") + " is a directory"}, "", ""},
		{"parent is a file", js(map[string]any{"file_path": "dir/x/y", "content": "x"}), true,
			[]string{"cannot create the directory of " + filepath.Join(root, "dir/x/y")}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check(t, tt.input, run(t, w, tt.input), tt.wantErr, tt.want...)
			if tt.path == "" {
				return
			}
			got, err := os.ReadFile(filepath.Join(root, tt.path))
			if err != nil || string(got) != tt.content {
				t.Errorf("after Write, %s = %q, %v; want %q", tt.path, got, err, tt.content)
			}
		})
	}
	st, err := os.Stat(filepath.Join(root, "old.txt"))
	if err != nil || st.Mode().Perm() != 0o750 {
		t.Errorf("overwritten file mode = %v, %v; want 0750 kept", st.Mode(), err)
	}
	noTemps(t, root)
}

func TestWriteSymlink(t *testing.T) {
	root := tree(t, file{path: "target.txt", content: "old"})
	link := filepath.Join(root, "link.txt")
	if err := os.Symlink("target.txt", link); err != nil {
		t.Skip("no symlinks:", err)
	}
	check(t, "link", run(t, NewWrite(Config{Root: root}), `{"file_path": "link.txt", "content": "new"}`), false, "Overwrote")
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link.txt after Write: %v, %v; want it still a symbolic link", fi.Mode(), err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "target.txt")); string(got) != "new" {
		t.Errorf("target.txt = %q; want the new content written through the link", got)
	}
}

// TestWriteAtomic makes the rename fail and checks that the old content
// stays and no temp file is left, for both Write and Edit.
func TestWriteAtomic(t *testing.T) {
	root := tree(t, file{path: "keep.txt", content: "precious\n"})
	fail := func() error { return errors.New("disk on fire") }
	w := NewWrite(Config{Root: root})
	w.hook = fail
	e := NewEdit(Config{Root: root})
	e.hook = fail
	check(t, "Write", run(t, w, `{"file_path": "keep.txt", "content": "lost"}`), true, "cannot write", "disk on fire", "unchanged")
	check(t, "Edit", run(t, e, `{"file_path": "keep.txt", "old_string": "precious", "new_string": "lost"}`), true, "disk on fire", "unchanged")
	if got, _ := os.ReadFile(filepath.Join(root, "keep.txt")); string(got) != "precious\n" {
		t.Errorf("keep.txt after failed writes = %q; want the old content", got)
	}
	noTemps(t, root)
}

// noTemps fails if a temp file of writeAtomic is left in dir.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp") {
			t.Errorf("temp file left behind: %s", p)
		}
		return nil
	})
}
