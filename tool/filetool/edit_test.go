package filetool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/tool"
)

func TestEdit(t *testing.T) {
	const src = "package a\n\nfunc f() {\n\tx := 1\n\tx = 1\n}\n"
	tests := []struct {
		name    string
		files   []file
		input   map[string]any
		wantErr bool
		want    []string
		path    string // checked afterwards, with content
		content string
	}{
		{"unique replacement", []file{{path: "a.go", content: src}},
			map[string]any{"file_path": "a.go", "old_string": "func f()", "new_string": "func g()"}, false,
			[]string{"replaced 1 occurrence", "     3\tfunc g() {"}, "a.go", "package a\n\nfunc g() {\n\tx := 1\n\tx = 1\n}\n"},
		{"not unique", []file{{path: "a.go", content: src}},
			map[string]any{"file_path": "a.go", "old_string": "x", "new_string": "y"}, true,
			[]string{"old_string matches 2 times", "at lines 4, 5", "replace_all"}, "a.go", src},
		{"replace all", []file{{path: "a.go", content: src}},
			map[string]any{"file_path": "a.go", "old_string": "1", "new_string": "2", "replace_all": true}, false,
			[]string{"replaced 2 occurrences"}, "a.go", "package a\n\nfunc f() {\n\tx := 2\n\tx = 2\n}\n"},
		{"replace all with one match", []file{{path: "a.go", content: src}},
			map[string]any{"file_path": "a.go", "old_string": "package a", "new_string": "package b", "replace_all": true}, false,
			[]string{"replaced 1 occurrence"}, "a.go", "package b" + src[len("package a"):]},
		{"multi-line old_string", []file{{path: "a.go", content: src}},
			map[string]any{"file_path": "a.go", "old_string": "\tx := 1\n\tx = 1\n", "new_string": ""}, false,
			[]string{"replaced 1 occurrence"}, "a.go", "package a\n\nfunc f() {\n}\n"},
		{"not found", []file{{path: "a.go", content: src}},
			map[string]any{"file_path": "a.go", "old_string": "func h()", "new_string": "x"}, true,
			[]string{"old_string not found in " + "%ROOT%/a.go", "exactly"}, "a.go", src},
		{"identical", []file{{path: "a.go", content: src}},
			map[string]any{"file_path": "a.go", "old_string": "x", "new_string": "x"}, true,
			[]string{"old_string and new_string are identical"}, "a.go", src},
		{"missing file", nil,
			map[string]any{"file_path": "b.go", "old_string": "x", "new_string": "y"}, true,
			[]string{"file not found: %ROOT%/b.go"}, "", ""},
		{"create with empty old_string", nil,
			map[string]any{"file_path": "new/c.go", "old_string": "", "new_string": "package c\n"}, false,
			[]string{"Created %ROOT%/new/c.go", "10 bytes (1 line)"}, "new/c.go", "package c\n"},
		{"empty old_string on an existing file", []file{{path: "a.go", content: src}},
			map[string]any{"file_path": "a.go", "old_string": "", "new_string": "x"}, true,
			[]string{"already exists and is not empty", "Write"}, "a.go", src},
		{"empty old_string fills an empty file", []file{{path: "e.txt"}},
			map[string]any{"file_path": "e.txt", "old_string": "", "new_string": "hi\n"}, false,
			[]string{"replaced 1 occurrence"}, "e.txt", "hi\n"},
		{"crlf file, lf old_string", []file{{path: "w.txt", content: "a\r\nb\r\nc\r\n"}},
			map[string]any{"file_path": "w.txt", "old_string": "a\nb\n", "new_string": "A\nB\n"}, false,
			[]string{"replaced 1 occurrence"}, "w.txt", "A\r\nB\r\nc\r\n"},
		{"directory", []file{{path: "d/x"}},
			map[string]any{"file_path": "d", "old_string": "a", "new_string": "b"}, true,
			[]string{"is a directory"}, "", ""},
		{"binary", []file{{path: "b.bin", content: "a\x00b"}},
			map[string]any{"file_path": "b.bin", "old_string": "a", "new_string": "b"}, true,
			[]string{"binary"}, "b.bin", "a\x00b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := tree(t, tt.files...)
			for i, w := range tt.want {
				tt.want[i] = replaceRoot(w, root)
			}
			input := js(tt.input)
			check(t, input, run(t, NewEdit(Config{Root: root}), input), tt.wantErr, tt.want...)
			if tt.path != "" {
				got, err := os.ReadFile(filepath.Join(root, tt.path))
				if err != nil || string(got) != tt.content {
					t.Errorf("after Edit, %s = %q, %v; want %q", tt.path, got, err, tt.content)
				}
			}
			noTemps(t, root)
		})
	}
}

func TestEditKeepsMode(t *testing.T) {
	root := tree(t, file{path: "run.sh", content: "echo a\n"})
	p := filepath.Join(root, "run.sh")
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	check(t, "run.sh", run(t, NewEdit(Config{Root: root}), `{"file_path": "run.sh", "old_string": "a", "new_string": "b"}`), false)
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("mode after Edit = %v, %v; want 0755", st.Mode(), err)
	}
}

// replaceRoot puts root in place of %ROOT% in s.
func replaceRoot(s, root string) string {
	return strings.ReplaceAll(s, "%ROOT%", filepath.ToSlash(root))
}

// An edit deep in a large file: the file written is what a plain replace
// gives, and the lines shown around the edit carry their true numbers
// (the snippet looks only at the bytes near the edit).
func TestEditLargeFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.txt")
	var b strings.Builder
	for i := 1; i <= 300_000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	orig := b.String()
	if err := os.WriteFile(p, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	ed := NewEdit(Config{})
	run := func(in map[string]any) string {
		t.Helper()
		raw, _ := json.Marshal(in)
		res, err := ed.Run(context.Background(), tool.Call{ID: "1", Name: "Edit", Input: raw})
		if err != nil || res.IsError {
			t.Fatalf("Edit(%s) = %q, %v", raw, res.Content, err)
		}
		return res.Content
	}
	out := run(map[string]any{"file_path": p, "old_string": "line 250000\n", "new_string": "CHANGED\nTWICE\n"})
	for _, want := range []string{"249997\tline 249997", "250000\tCHANGED", "250001\tTWICE", "250002\tline 250001"} {
		if !strings.Contains(out, want) {
			t.Errorf("the snippet lacks %q:\n%s", want, out)
		}
	}
	got, _ := os.ReadFile(p)
	if want := strings.Replace(orig, "line 250000\n", "CHANGED\nTWICE\n", 1); string(got) != want {
		t.Fatal("the edited file is not the plain replacement")
	}
	out = run(map[string]any{"file_path": p, "old_string": "9\n", "new_string": "9!\n", "replace_all": true})
	got, _ = os.ReadFile(p)
	want := strings.ReplaceAll(strings.Replace(orig, "line 250000\n", "CHANGED\nTWICE\n", 1), "9\n", "9!\n")
	if string(got) != want {
		t.Fatal("replace_all wrote something else than strings.ReplaceAll")
	}
	if !strings.Contains(out, "     9\tline 9!") {
		t.Errorf("the replace_all snippet does not show the first one:\n%s", out)
	}
}
