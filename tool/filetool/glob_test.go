package filetool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ignoreTree is a tree with .gitignore files at two levels and a .git
// directory.
func ignoreTree(t *testing.T) string {
	return tree(t,
		file{path: ".gitignore", content: "*.log\nbuild/\n/secret.txt\n!keep.log\n"},
		file{path: "a.go", content: "package a\n", age: 3 * time.Hour},
		file{path: "b.go", content: "package b\n", age: 1 * time.Hour},
		file{path: "c.go", content: "package c\n", age: 2 * time.Hour},
		file{path: "sub/d.go", content: "package d\n"},
		file{path: "sub/.gitignore", content: "gen/\n*.tmp\n!wanted.tmp\n"},
		file{path: "sub/gen/x.go", content: "package gen\n"},
		file{path: "sub/wanted.tmp", content: "w"},
		file{path: "sub/junk.tmp", content: "j"},
		file{path: "sub/secret.txt", content: "not secret here"},
		file{path: "sub/x.log", content: "log"},
		file{path: "build/out.go", content: "package out\n"},
		file{path: "x/build", content: "a file named build"},
		file{path: "secret.txt", content: "secret"},
		file{path: "debug.log", content: "debug"},
		file{path: "keep.log", content: "keep"},
		file{path: ".git/config", content: "[core]"},
		file{path: ".git/HEAD", content: "ref: refs/heads/main"},
		file{path: "mod/.git", content: "gitdir: ../.git/modules/mod"},
		file{path: "mod/m.go", content: "package m\n"},
		file{path: "src/x/test_a.py", content: "", age: time.Minute},
		file{path: "src/test_b.py", content: ""},
		file{path: "src/x/a.py", content: ""},
	)
}

func TestGlob(t *testing.T) {
	root := ignoreTree(t)
	outside := tree(t, file{path: "o.go", content: "package o\n"})
	g := NewGlob(Config{Root: root})
	tests := []struct {
		name    string
		input   map[string]any
		wantErr bool
		want    string // the whole content, or a substring for errors
	}{
		{"doublestar, newest first", map[string]any{"pattern": "**/*.go"}, false,
			"mod/m.go\nsub/d.go\nb.go\nc.go\na.go"},
		{"top level only", map[string]any{"pattern": "*.go"}, false, "b.go\nc.go\na.go"},
		{"leading ./", map[string]any{"pattern": "./*.go"}, false, "b.go\nc.go\na.go"},
		{"static prefix", map[string]any{"pattern": "src/**/test_*.py"}, false, "src/test_b.py\nsrc/x/test_a.py"},
		{"braces and negation", map[string]any{"pattern": "**/*.{log,tmp}"}, false, "keep.log\nsub/wanted.tmp"},
		{"anchored pattern", map[string]any{"pattern": "**/secret.txt"}, false, "sub/secret.txt"},
		{"dir pattern spares files", map[string]any{"pattern": "**/build"}, false, "x/build"},
		{".git skipped", map[string]any{"pattern": "**/{config,HEAD,.git}"}, false, "No files found"},
		{"path below root", map[string]any{"pattern": "*.go", "path": "sub"}, false, "sub/d.go"},
		{"ancestor .gitignore applies", map[string]any{"pattern": "*", "path": "sub"}, false,
			"sub/.gitignore\nsub/d.go\nsub/secret.txt\nsub/wanted.tmp"},
		{"absolute pattern", map[string]any{"pattern": filepath.ToSlash(root) + "/sub/*.go"}, false, "sub/d.go"},
		{"outside root is absolute", map[string]any{"pattern": "*.go", "path": outside}, false, filepath.Join(outside, "o.go")},
		{"static prefix missing", map[string]any{"pattern": "nope/**/*.go"}, false, "No files found"},
		{"missing path", map[string]any{"pattern": "*", "path": "nope"}, true, "path does not exist: " + filepath.Join(root, "nope")},
		{"path is a file", map[string]any{"pattern": "*", "path": "a.go"}, true, "is not a directory"},
		{"invalid pattern", map[string]any{"pattern": "*.{go"}, true, `invalid pattern "*.{go": unclosed brace`},
		{"invalid class", map[string]any{"pattern": "[z-a]"}, true, `invalid pattern "[z-a]"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := js(tt.input)
			res := run(t, g, input)
			if tt.wantErr || strings.HasPrefix(tt.want, "No files") {
				check(t, input, res, tt.wantErr, tt.want)
				return
			}
			if res.IsError || res.Content != tt.want {
				t.Errorf("Glob(%s) = %q (error %v); want %q", input, res.Content, res.IsError, tt.want)
			}
		})
	}
}

// TestGlobRepoTop checks that the .gitignore of the repository's top and
// .git/info/exclude apply when Root is a subdirectory of the repository.
func TestGlobRepoTop(t *testing.T) {
	top := tree(t,
		file{path: ".git/info/exclude", content: "*.excluded\n"},
		file{path: ".gitignore", content: "*.gen\n/work/local/\n"},
		file{path: "work/a.gen", content: ""},
		file{path: "work/b.excluded", content: ""},
		file{path: "work/local/c.txt", content: ""},
		file{path: "work/d.txt", content: ""},
	)
	g := NewGlob(Config{Root: filepath.Join(top, "work")})
	res := run(t, g, `{"pattern": "**/*"}`)
	if res.IsError || res.Content != "d.txt" {
		t.Errorf("Glob(**/*) = %q; want only d.txt", res.Content)
	}
}

func TestGlobCap(t *testing.T) {
	root := t.TempDir()
	for i := range MaxGlobResults + 5 {
		p := filepath.Join(root, fmt.Sprintf("f%04d.txt", i))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		mt := base.Add(time.Duration(i) * time.Second) // higher i, newer
		os.Chtimes(p, mt, mt)
	}
	res := run(t, NewGlob(Config{Root: root}), `{"pattern": "*.txt"}`)
	lines := strings.Split(res.Content, "\n")
	if len(lines) != MaxGlobResults+1 || lines[0] != fmt.Sprintf("f%04d.txt", MaxGlobResults+4) {
		t.Fatalf("Glob over %d files: %d lines, first %q; want %d paths (newest first) and a note", MaxGlobResults+5, len(lines), lines[0], MaxGlobResults)
	}
	check(t, "cap", res, false, "[Showing the 1000 most recently modified of 1005 matching files.")
}
