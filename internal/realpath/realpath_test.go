package realpath

import (
	"os"
	"path/filepath"
	"testing"
)

func TestResolve(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cwd := filepath.Join(root, "proj")
	out := filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(cwd, "src"), filepath.Join(cwd, ".git"), out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"src/link":    out,                   // a folder link leading outside
		"src/cfg":     "../.git/config",      // a dangling link to a protected file
		"src/self":    "self",                // a loop
		"src/rel":     "../src",              // a relative link back inside
		"src/chain":   "cfg",                 // a link to a dangling link
		"src/deadend": "../missing/dir/file", // dangling through missing folders
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(cwd, name)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		in, want string
	}{
		{cwd, cwd},
		{filepath.Join(cwd, "src", "a.go"), filepath.Join(cwd, "src", "a.go")},
		{filepath.Join(cwd, "src", "link", "x"), filepath.Join(out, "x")},
		{filepath.Join(cwd, "src", "link", "new", "deeper"), filepath.Join(out, "new", "deeper")},
		{filepath.Join(cwd, "src", "cfg"), filepath.Join(cwd, ".git", "config")},
		{filepath.Join(cwd, "src", "chain"), filepath.Join(cwd, ".git", "config")},
		{filepath.Join(cwd, "src", "rel", "link", "y"), filepath.Join(out, "y")},
		{filepath.Join(cwd, "src", "deadend"), filepath.Join(cwd, "missing", "dir", "file")},
		{filepath.Join(cwd, "nope", "a", "b"), filepath.Join(cwd, "nope", "a", "b")},
	}
	for _, tt := range tests {
		if got := Resolve(tt.in); got != tt.want {
			t.Errorf("Resolve(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
	// A loop resolves to something without hanging.
	_ = Resolve(filepath.Join(cwd, "src", "self", "x"))
}
