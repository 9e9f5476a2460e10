package filetool

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// confineTree returns a project folder and a folder outside it holding
// secret.txt, both with their links resolved (t.TempDir may sit below
// one).
func confineTree(t *testing.T) (proj, out string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj, out = filepath.Join(base, "proj"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(proj, "src"), out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(out, "secret.txt"), "SECRET outside\n")
	write(filepath.Join(proj, "src", "a.go"), "package a // SECRET? no\n")
	return proj, out
}

// insideOnly is a Confine that refuses real paths outside proj and
// records what it was asked.
type insideOnly struct {
	proj  string
	mu    sync.Mutex
	calls []string
}

func (c *insideOnly) confine(tool, abs, real string) error {
	c.mu.Lock()
	c.calls = append(c.calls, tool+" "+abs+" -> "+real)
	c.mu.Unlock()
	if real != c.proj && !strings.HasPrefix(real, c.proj+string(filepath.Separator)) {
		return errors.New("outside the working directories")
	}
	return nil
}

// The tools hand Confine the real path of what they opened whenever a
// link is on the way, and read or write nothing it refuses.
func TestConfineLinks(t *testing.T) {
	proj, out := confineTree(t)
	if err := os.Symlink(out, filepath.Join(proj, "src", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, "secret.txt"), filepath.Join(proj, "src", "leak.txt")); err != nil {
		t.Fatal(err)
	}
	c := &insideOnly{proj: proj}
	cfg := Config{Root: proj, Confine: c.confine}

	res := run(t, NewRead(cfg), js(map[string]any{"file_path": "src/link/secret.txt"}))
	check(t, "read through folder link", res, true, "Read: refused", filepath.Join(out, "secret.txt"), "outside the working directories")
	if strings.Contains(res.Content, "SECRET outside") {
		t.Errorf("Read showed the refused file: %s", res.Content)
	}
	check(t, "read file link", run(t, NewRead(cfg), js(map[string]any{"file_path": "src/leak.txt"})), true, "Read: refused")
	check(t, "read plain", run(t, NewRead(cfg), js(map[string]any{"file_path": "src/a.go"})), false, "package a")

	check(t, "write through folder link", run(t, NewWrite(cfg), js(map[string]any{"file_path": "src/link/x", "content": "pwned"})), true, "Write: refused")
	check(t, "write new folders through link", run(t, NewWrite(cfg), js(map[string]any{"file_path": "src/link/new/x", "content": "pwned"})), true, "Write: refused")
	for _, p := range []string{filepath.Join(out, "x"), filepath.Join(out, "new")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists after a refused Write", p)
		}
	}
	check(t, "edit file link", run(t, NewEdit(cfg), js(map[string]any{"file_path": "src/leak.txt", "old_string": "SECRET", "new_string": "x"})), true, "Edit: refused")
	if b, _ := os.ReadFile(filepath.Join(out, "secret.txt")); string(b) != "SECRET outside\n" {
		t.Errorf("outside/secret.txt = %q after refused writes", b)
	}

	res = run(t, NewGrep(cfg), js(map[string]any{"pattern": "SECRET", "output_mode": "content"}))
	if strings.Contains(res.Content, "SECRET outside") {
		t.Errorf("Grep read a file whose link leads outside: %s", res.Content)
	}
	check(t, "grep below folder link", run(t, NewGrep(cfg), js(map[string]any{"pattern": "SECRET", "path": "src/link"})), true, "Grep: refused")
	check(t, "glob below folder link", run(t, NewGlob(cfg), js(map[string]any{"pattern": "*", "path": "src/link"})), true, "Glob: refused")

	// Without links Confine is not asked at all.
	c.calls = nil
	run(t, NewRead(cfg), js(map[string]any{"file_path": "src/a.go"}))
	run(t, NewWrite(cfg), js(map[string]any{"file_path": "src/b.go", "content": "package a\n"}))
	run(t, NewEdit(cfg), js(map[string]any{"file_path": "src/b.go", "old_string": "a", "new_string": "b"}))
	if len(c.calls) != 0 {
		t.Errorf("Confine asked about paths without links: %v", c.calls)
	}
}

// A link swapped in after the check cannot redirect a write: the
// temp file is renamed inside the folder that was opened and checked,
// and a name that has become a link is replaced, not followed.
func TestWriteSwapRace(t *testing.T) {
	proj, out := confineTree(t)
	c := &insideOnly{proj: proj}
	src := filepath.Join(proj, "src")

	// The file becomes a link to the outside file just before the rename.
	w := NewWrite(Config{Root: proj, Confine: c.confine})
	w.hook = func() error {
		os.Remove(filepath.Join(src, "a.go"))
		return os.Symlink(filepath.Join(out, "secret.txt"), filepath.Join(src, "a.go"))
	}
	check(t, "swap file", run(t, w, js(map[string]any{"file_path": "src/a.go", "content": "new\n"})), false, "Overwrote")
	if b, _ := os.ReadFile(filepath.Join(out, "secret.txt")); string(b) != "SECRET outside\n" {
		t.Errorf("outside/secret.txt = %q: the write followed a swapped-in link", b)
	}
	if fi, err := os.Lstat(filepath.Join(src, "a.go")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("src/a.go after the write: %v, %v; want the regular file written", fi, err)
	}

	// The folder becomes a link to the outside folder just before the
	// rename: the file lands in the folder that was opened.
	moved := filepath.Join(proj, "moved")
	w.hook = func() error {
		if err := os.Rename(src, moved); err != nil {
			return err
		}
		return os.Symlink(out, src)
	}
	check(t, "swap folder", run(t, w, js(map[string]any{"file_path": "src/c.go", "content": "new\n"})), false, "Created")
	if _, err := os.Stat(filepath.Join(out, "c.go")); err == nil {
		t.Error("outside/c.go exists: the write followed a swapped-in folder link")
	}
	if b, err := os.ReadFile(filepath.Join(moved, "c.go")); err != nil || string(b) != "new\n" {
		t.Errorf("moved/c.go = %q, %v; want the file in the folder that was opened", b, err)
	}
	noTemps(t, proj)
	noTemps(t, out)
}

// A symbolic link is still written through when Confine allows it.
func TestWriteThroughAllowedLink(t *testing.T) {
	proj, _ := confineTree(t)
	if err := os.Symlink("a.go", filepath.Join(proj, "src", "alias.go")); err != nil {
		t.Fatal(err)
	}
	c := &insideOnly{proj: proj}
	check(t, "write alias", run(t, NewWrite(Config{Root: proj, Confine: c.confine}), js(map[string]any{"file_path": "src/alias.go", "content": "package b\n"})), false, "Overwrote")
	if b, _ := os.ReadFile(filepath.Join(proj, "src", "a.go")); string(b) != "package b\n" {
		t.Errorf("src/a.go = %q; want the content written through the link", b)
	}
	if fi, _ := os.Lstat(filepath.Join(proj, "src", "alias.go")); fi == nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("src/alias.go is no longer a link")
	}
	if len(c.calls) != 1 || !strings.HasPrefix(c.calls[0], "Write ") {
		t.Errorf("Confine calls = %v; want one for the Write", c.calls)
	}
}

// Withhold keeps files out of Grep and Glob results, with a note.
func TestWithhold(t *testing.T) {
	root := tree(t, file{path: ".env", content: "TOKEN=SECRET123\n"}, file{path: "src/a.go", content: "package a\n"},
		file{path: "src/b.go", content: "// TOKEN here too\n"})
	env := filepath.Join(root, ".env")
	cfg := Config{Root: root, Withhold: func(abs string) bool { return abs == env }}

	res := run(t, NewGrep(cfg), js(map[string]any{"pattern": "SECRET123", "output_mode": "content"}))
	check(t, "grep only in .env", res, false, "No matches", "1 path withheld by permission deny rules")
	if strings.Contains(res.Content, "TOKEN=SECRET123") || strings.Contains(res.Content, ".env") {
		t.Errorf("Grep showed a withheld file: %s", res.Content)
	}
	res = run(t, NewGrep(cfg), js(map[string]any{"pattern": "TOKEN"}))
	check(t, "grep shared", res, false, "src/b.go", "1 path withheld")
	if strings.Contains(res.Content, ".env") {
		t.Errorf("Grep listed a withheld file: %s", res.Content)
	}
	res = run(t, NewGlob(cfg), js(map[string]any{"pattern": "**/*"}))
	check(t, "glob", res, false, "src/a.go", "1 path withheld")
	if strings.Contains(res.Content, ".env\n") || strings.HasPrefix(res.Content, ".env") {
		t.Errorf("Glob listed a withheld file: %s", res.Content)
	}
	res = run(t, NewGlob(cfg), js(map[string]any{"pattern": "src/*.go"}))
	if strings.Contains(res.Content, "withheld") {
		t.Errorf("Glob noted withheld files it never matched: %s", res.Content)
	}
	// Without Withhold nothing changes.
	check(t, "grep plain", run(t, NewGrep(Config{Root: root}), js(map[string]any{"pattern": "SECRET123"})), false, ".env")
}
