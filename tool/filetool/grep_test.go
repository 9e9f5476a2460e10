package filetool

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func grepTree(t *testing.T) string {
	return tree(t,
		file{path: ".gitignore", content: "*.log\n"},
		file{path: "a.go", content: "package a\n\nfunc Hello() {}\n// hello world\n", age: 2 * time.Hour},
		file{path: "b.go", content: "package b\nfunc World() {}\n", age: time.Hour},
		file{path: "notes.md", content: "Hello\nline2\nline3\nline4\nHello again\n", age: 3 * time.Hour},
		file{path: "bin.dat", content: "Hello\x00\x01"},
		file{path: "ignored.log", content: "Hello from a log\n"},
		file{path: "sub/c.py", content: "def hello():\n    pass\n"},
		file{path: "multi.txt", content: "start\nmiddle\nend\n"},
		file{path: "crlf.txt", content: "one\r\ntwo\r\n"},
		file{path: "long.txt", content: "x" + strings.Repeat("é", 400) + "needle\n"},
	)
}

func TestGrep(t *testing.T) {
	root := grepTree(t)
	gr := NewGrep(Config{Root: root})
	tests := []struct {
		name    string
		input   map[string]any
		wantErr bool
		want    string // the whole content; with wantErr or a leading "~", a substring
	}{
		{"files by mtime", map[string]any{"pattern": "Hello"}, false, "Found 2 files\na.go\nnotes.md"},
		{"case insensitive", map[string]any{"pattern": "hello", "-i": true}, false, "Found 3 files\nsub/c.py\na.go\nnotes.md"},
		{"content", map[string]any{"pattern": "Hello", "path": "notes.md", "output_mode": "content"}, false,
			"notes.md:1:Hello\nnotes.md:5:Hello again"},
		{"content without line numbers", map[string]any{"pattern": "Hello", "path": "notes.md", "output_mode": "content", "-n": false}, false,
			"notes.md:Hello\nnotes.md:Hello again"},
		{"context -C", map[string]any{"pattern": "line3", "output_mode": "content", "-C": 1}, false,
			"notes.md-2-line2\nnotes.md:3:line3\nnotes.md-4-line4"},
		{"context -A with separator", map[string]any{"pattern": "Hello", "path": "notes.md", "output_mode": "content", "-A": 1}, false,
			"notes.md:1:Hello\nnotes.md-2-line2\n--\nnotes.md:5:Hello again"},
		{"context -B", map[string]any{"pattern": "Hello", "path": "notes.md", "output_mode": "content", "-B": 1}, false,
			"notes.md:1:Hello\n--\nnotes.md-4-line4\nnotes.md:5:Hello again"},
		{"-A overrides -C", map[string]any{"pattern": "line3", "path": "notes.md", "output_mode": "content", "-C": 1, "-A": 0}, false,
			"notes.md-2-line2\nnotes.md:3:line3"},
		{"merged context", map[string]any{"pattern": "line[23]", "path": "notes.md", "output_mode": "content", "-C": 1}, false,
			"notes.md-1-Hello\nnotes.md:2:line2\nnotes.md:3:line3\nnotes.md-4-line4"},
		{"separator between files", map[string]any{"pattern": "^package", "output_mode": "content", "-A": 1}, false,
			"a.go:1:package a\na.go-2-\n--\nb.go:1:package b\nb.go-2-func World() {}"},
		{"count", map[string]any{"pattern": "Hello", "output_mode": "count"}, false,
			"a.go:1\nnotes.md:2\n\nFound 3 matching lines in 2 files."},
		{"glob", map[string]any{"pattern": "Hello", "glob": "*.go"}, false, "Found 1 file\na.go"},
		{"glob braces", map[string]any{"pattern": "Hello", "glob": "*.{go,md}"}, false, "Found 2 files\na.go\nnotes.md"},
		{"glob exclude", map[string]any{"pattern": "Hello", "glob": "!*.md"}, false, "Found 1 file\na.go"},
		{"glob with a slash", map[string]any{"pattern": "hello", "-i": true, "glob": "sub/*"}, false, "Found 1 file\nsub/c.py"},
		{"type", map[string]any{"pattern": "hello", "-i": true, "type": "py"}, false, "Found 1 file\nsub/c.py"},
		{"type without matches", map[string]any{"pattern": "hello", "type": "rust"}, false, `~No matches found for "hello"`},
		{"unknown type", map[string]any{"pattern": "x", "type": "cobol"}, true, `unknown type "cobol"; known types: c, cpp, go,`},
		{"head_limit", map[string]any{"pattern": "Hello", "head_limit": 1}, false,
			"Found 2 files\na.go\n[Output limited by head_limit=1; continue with offset=1.]"},
		{"head_limit and offset", map[string]any{"pattern": "Hello", "head_limit": 1, "offset": 1}, false, "Found 2 files\nnotes.md"},
		{"offset past the end", map[string]any{"pattern": "Hello", "offset": 5}, false, "~[No output at offset 5"},
		{"content head_limit", map[string]any{"pattern": "Hello", "output_mode": "content", "head_limit": 2}, false,
			"a.go:3:func Hello() {}\nnotes.md:1:Hello\n[Output limited by head_limit=2; continue with offset=2.]"},
		{"multiline", map[string]any{"pattern": `start\nmiddle`, "multiline": true}, false, "Found 1 file\nmulti.txt"},
		{"multiline content", map[string]any{"pattern": `start.*end`, "multiline": true, "output_mode": "content"}, false,
			"multi.txt:1:start\nmulti.txt:2:middle\nmulti.txt:3:end"},
		{"multiline count", map[string]any{"pattern": `middle\nend`, "multiline": true, "output_mode": "count"}, false,
			"multi.txt:2\n\nFound 2 matching lines in 1 file."},
		{"no multiline", map[string]any{"pattern": `start.*end`}, false, "~No matches found"},
		{"crlf line end", map[string]any{"pattern": `one$`, "output_mode": "content"}, false, "crlf.txt:1:one"},
		{"long line cut", map[string]any{"pattern": `needle`, "output_mode": "content"}, false,
			"long.txt:1:x" + strings.Repeat("é", 249) + " ... [308 bytes more]"},
		{"explicit ignored file", map[string]any{"pattern": "Hello", "path": "ignored.log"}, false, "Found 1 file\nignored.log"},
		{"binary file", map[string]any{"pattern": "Hello", "path": "bin.dat"}, false, "~No matches found"},
		{"invalid regexp", map[string]any{"pattern": "func("}, true, `invalid regular expression "func(": missing closing )`},
		{"lookahead", map[string]any{"pattern": "a(?=b)"}, true, "invalid regular expression"},
		{"missing path", map[string]any{"pattern": "x", "path": "nope"}, true, "path does not exist: " + filepath.Join(root, "nope")},
		{"invalid glob", map[string]any{"pattern": "x", "glob": "*.{go"}, true, `invalid glob "*.{go"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := js(tt.input)
			res := run(t, gr, input)
			if sub, ok := strings.CutPrefix(tt.want, "~"); ok || tt.wantErr {
				check(t, input, res, tt.wantErr, sub)
				return
			}
			if res.IsError || res.Content != tt.want {
				t.Errorf("Grep(%s) = %q (error %v); want %q", input, res.Content, res.IsError, tt.want)
			}
		})
	}
}

func TestGrepBudget(t *testing.T) {
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "match %d %s\n", i, strings.Repeat("z", 40))
	}
	root := tree(t, file{path: "big.txt", content: b.String()})
	res := run(t, NewGrep(Config{Root: root, MaxReadBytes: 4 << 10}), `{"pattern": "match", "output_mode": "content"}`)
	check(t, "budget", res, false, "big.txt:1:match 0 ", "[Output cut at 4 KiB.", "offset=")
	if len(res.Content) > 4<<10+200 {
		t.Errorf("Grep returned %d bytes; want about the 4 KiB limit", len(res.Content))
	}
}

func TestGrepTypeEnum(t *testing.T) {
	var schema struct {
		Properties struct {
			Type struct {
				Enum []string `json:"enum"`
			} `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(NewGrep(Config{}).Spec().InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(schema.Properties.Type.Enum, ", "), typeNames(); got != want {
		t.Errorf("schema type enum = %s; want the type table %s", got, want)
	}
}
