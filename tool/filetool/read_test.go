package filetool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/tool"
)

func TestRead(t *testing.T) {
	var long strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	root := tree(t,
		file{path: "hello.txt", content: "hello\n\tworld\n"},
		file{path: "nonl.txt", content: "a\nb"},
		file{path: "thirty.txt", content: long.String()},
		file{path: "empty.txt"},
		file{path: "crlf.txt", content: "one\r\ntwo\r\n"},
		file{path: "wide.txt", content: strings.Repeat("é", 1500) + "\nshort\n"},
		file{path: "nul.bin", content: "abc\x00def"},
		file{path: "latin1.txt", content: "caf\xe9\nna\xefve\nok\n"},
		file{path: "noise.bin", content: "\x89\xff\x01\x02abc\xfe\x03\x04\x05\x06\n"},
		file{path: "split.txt", content: strings.Repeat("a", sniffLen-1) + "é\n"},
		file{path: "dir/inner.txt", content: "x\n"},
		file{path: "config.yaml", content: "k: v\n"},
	)
	r := NewRead(Config{Root: root, MaxLines: 20})
	tests := []struct {
		name    string
		input   string
		wantErr bool
		want    []string
		notWant []string
	}{
		{"whole file", js(map[string]any{"file_path": "hello.txt"}), false,
			[]string{"     1\thello\n     2\t\tworld\n"}, []string{"Showing"}},
		{"absolute path", js(map[string]any{"file_path": filepath.Join(root, "hello.txt")}), false,
			[]string{"     1\thello\n"}, nil},
		{"no final newline", js(map[string]any{"file_path": "nonl.txt"}), false,
			[]string{"     1\ta\n     2\tb\n"}, []string{"Showing"}},
		{"offset and limit", js(map[string]any{"file_path": "thirty.txt", "offset": 5, "limit": 3}), false,
			[]string{"     5\tline 5\n     6\tline 6\n     7\tline 7\n", "[Showing lines 5-7 of 30. Continue with offset=8.]"},
			[]string{"line 4\n", "line 8\n"}},
		{"default limit MaxLines", js(map[string]any{"file_path": "thirty.txt"}), false,
			[]string{"    20\tline 20\n", "[Showing lines 1-20 of 30. Continue with offset=21.]"},
			[]string{"line 21"}},
		{"offset to the end", js(map[string]any{"file_path": "thirty.txt", "offset": 25}), false,
			[]string{"    30\tline 30\n"}, []string{"Showing", "line 24"}},
		{"offset past end", js(map[string]any{"file_path": "thirty.txt", "offset": 31}), true,
			[]string{"offset 31 is past the end", "which has 30 lines"}, nil},
		{"empty file", js(map[string]any{"file_path": "empty.txt"}), false,
			[]string{"exists but is empty"}, nil},
		{"crlf", js(map[string]any{"file_path": "crlf.txt"}), false,
			[]string{"     1\tone\n     2\ttwo\n"}, []string{"\r"}},
		{"long line cut on a rune boundary", js(map[string]any{"file_path": "wide.txt"}), false,
			[]string{strings.Repeat("é", 1000) + " ... [line truncated: 1000 bytes more]\n", "     2\tshort"}, nil},
		{"binary NUL", js(map[string]any{"file_path": "nul.bin"}), true,
			[]string{"nul.bin looks like a binary file", "Read shows text files and PNG, JPEG, GIF and WebP images only"}, nil},
		{"invalid UTF-8", js(map[string]any{"file_path": "latin1.txt"}), false,
			[]string{"     1\tcaf\ufffd\n     2\tna\ufffdve\n     3\tok\n", "[Lines 1, 2 have bytes that are not valid UTF-8", "shown as \ufffd"}, nil},
		{"mostly not text", js(map[string]any{"file_path": "noise.bin"}), true,
			[]string{"noise.bin looks like a binary file"}, nil},
		{"rune split by the sniff window", js(map[string]any{"file_path": "split.txt"}), false,
			[]string{"\taaaa", "line truncated"}, nil},
		{"directory", js(map[string]any{"file_path": "dir"}), true,
			[]string{filepath.Join(root, "dir") + " is a directory; use Glob"}, nil},
		{"missing with a suggestion", js(map[string]any{"file_path": "helo.txt"}), true,
			[]string{"file not found: " + filepath.Join(root, "helo.txt"), "Did you mean " + filepath.Join(root, "hello.txt")}, nil},
		{"missing, other extension", js(map[string]any{"file_path": "config.yml"}), true,
			[]string{"Did you mean " + filepath.Join(root, "config.yaml")}, nil},
		{"missing, nothing similar", js(map[string]any{"file_path": "zzzzzzzz.go"}), true,
			[]string{"file not found: " + filepath.Join(root, "zzzzzzzz.go")}, []string{"Did you mean"}},
		{"missing directory", js(map[string]any{"file_path": "nope/x.txt"}), true,
			[]string{"file not found", "does not exist either"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, r, tt.input)
			check(t, tt.input, res, tt.wantErr, tt.want...)
			for _, nw := range tt.notWant {
				if strings.Contains(res.Content, nw) {
					t.Errorf("Run(%s) content has %q; got:\n%s", tt.input, nw, res.Content)
				}
			}
		})
	}
}

func TestReadSizeLimit(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&b, "%04d %s\n", i, strings.Repeat("x", 90))
	}
	root := tree(t, file{path: "big.txt", content: b.String()},
		file{path: "huge-line.txt", content: strings.Repeat("y", 1<<20) + "\nend\n"})
	r := NewRead(Config{Root: root, MaxReadBytes: 10 << 10})
	res := run(t, r, `{"file_path": "big.txt"}`)
	check(t, "big.txt", res, false, "     1\t0001 ", "[Output stopped after line ", "at most 10 KiB", "Continue with offset=")
	if len(res.Content) > 10<<10+300 {
		t.Errorf("Read returned %d bytes; want about the 10 KiB limit", len(res.Content))
	}
	// The note's offset continues where the output stopped.
	var last, next int
	lines := strings.Split(res.Content, "\n")
	fmt.Sscanf(strings.TrimSpace(lines[len(lines)-3]), "%d", &last)
	if _, err := fmt.Sscanf(res.Content[strings.Index(res.Content, "offset=")+len("offset="):], "%d", &next); err != nil || next != last+1 {
		t.Errorf("note offset = %d (%v); want %d, after the last line shown", next, err, last+1)
	}
	res = run(t, r, fmt.Sprintf(`{"file_path": "big.txt", "offset": %d, "limit": 5}`, next))
	check(t, "big.txt from next", res, false, fmt.Sprintf("%04d ", next), "of 1000. Continue with offset=")

	// A single huge line is cut, not refused.
	res = run(t, r, `{"file_path": "huge-line.txt"}`)
	check(t, "huge-line.txt", res, false, "[line truncated: ", "     2\tend")
}

func TestReadSpecialFile(t *testing.T) {
	if _, err := os.Stat("/dev/null"); err != nil {
		t.Skip("no /dev/null")
	}
	res := run(t, NewRead(Config{Root: t.TempDir()}), `{"file_path": "/dev/null"}`)
	check(t, "/dev/null", res, true, "not a regular file")
}

// A large file's line index (readindex.go) changes no Read's result: the
// same ranges read by a tool that has seen the file and by a fresh one
// agree, also after the file grows and after a line count changes.
func TestReadIndexAgrees(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.log")
	var b strings.Builder
	for i := 0; b.Len() < indexMinSize*3; i++ {
		if i%1000 == 999 {
			fmt.Fprintf(&b, "line %d is a long one %s\n", i, strings.Repeat("x", 5000))
		} else {
			fmt.Fprintf(&b, "line %d\r\n", i)
		}
	}
	b.WriteString("last line without a newline")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	total := strings.Count(b.String(), "\n") + 1
	offsets := []int{total - 10, 1, total / 2, total - 1, total, total + 1, 12345, total / 3}
	warm := NewRead(Config{})
	for round := range 2 {
		checkReads(t, p, warm, offsets)
		if idx := warm.index.files[p]; idx == nil || len(idx.marks) < 2 {
			t.Fatalf("round %d: no index was kept for the large file", round)
		}
		// The file grows: the index of the old version is dropped.
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("\nmore\nand more\n")
		f.Close()
		total += 2
	}
}

// checkReads checks that Reads of p at offsets through r (which keeps
// its index), and through a fresh Read, show what a Read that keeps no
// index shows: the line-by-line reading from the start.
func checkReads(t *testing.T, p string, r *Read, offsets []int) {
	t.Helper()
	read := func(r *Read, offset, limit int) string {
		t.Helper()
		raw, _ := json.Marshal(map[string]any{"file_path": p, "offset": offset, "limit": limit})
		res, err := r.Run(context.Background(), tool.Call{ID: "1", Name: "Read", Input: raw})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content
	}
	ref := NewRead(Config{})
	ref.index.off = true
	for _, off := range offsets {
		want := read(ref, off, 20)
		for name, r := range map[string]*Read{"kept": r, "fresh": NewRead(Config{})} {
			if got := read(r, off, 20); got != want {
				t.Fatalf("offset %d: the %s indexed Read differs from the unindexed one:\n%.300q\n---\n%.300q", off, name, got, want)
			}
		}
	}
}

// TestReadSparse reads a sparse file whose holes span whole windows of
// the count, and start and end it: holes read as NUL bytes, so they are
// parts of long lines.
func TestReadSparse(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sparse.log")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Repeat("a short line\n", 1000)
	for _, at := range []int64{0, indexEvery - 7, 3*indexEvery + 4096, 4*indexEvery - 1} {
		if _, err := f.WriteAt([]byte(lines), at); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(5*indexEvery + 123); err != nil { // a hole at the end
		t.Fatal(err)
	}
	f.Close()
	checkReads(t, p, NewRead(Config{}), []int{1, 999, 1000, 1001, 1002, 2500, 3001, 3999, 4000, 4001, 4002})
	// The count itself, against bytes.Count.
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	idx := &lineIndex{info: st}
	g, _ := os.Open(p)
	defer g.Close()
	if err := indexLines(t.Context(), g, st.Size(), idx); err != nil {
		t.Fatal(err)
	}
	if n, _ := idx.total(); n != countLines(string(data)) {
		t.Errorf("indexLines total = %d; want %d", n, countLines(string(data)))
	}
	for _, m := range idx.marks {
		if want := bytes.Count(data[:m.off], []byte("\n")); m.lines != want {
			t.Errorf("mark at %d says %d lines before it; want %d", m.off, m.lines, want)
		}
	}
	// Mapped a chunk at a time (as a file over 1 GiB is), the count and
	// the marks are the same.
	chunked := &lineIndex{info: st}
	if err := indexLinesBy(t.Context(), g, st.Size(), chunked, 3*countEvery); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(chunked.marks, idx.marks) || chunked.lines != idx.lines {
		t.Errorf("counted 3 MiB at a time: %d lines, marks %v; at once: %d lines, marks %v", chunked.lines, chunked.marks, idx.lines, idx.marks)
	}
	// A count whose context ended stops, and says so.
	ctx, cancel := contextCanceled(t)
	defer cancel()
	fresh := &lineIndex{info: st}
	if err := indexLines(ctx, g, st.Size(), fresh); !errors.Is(err, context.Canceled) {
		t.Errorf("indexLines(canceled) = %v; want context.Canceled", err)
	}
	if _, known := fresh.total(); known {
		t.Error("a canceled count set the line count")
	}
	if _, err := NewRead(Config{}).Run(ctx, tool.Call{Input: json.RawMessage(fmt.Sprintf(`{"file_path": %q, "offset": 4000}`, p))}); err == nil {
		t.Error("Read(canceled ctx) of a large file: error = nil; want the context's error")
	}
}

// FuzzRead reads random text at random offsets and checks the lines shown
// against a plain split of the content: numbered from 1, without their
// "\r\n", cut at maxLineLen on a rune boundary, invalid UTF-8 shown as
// U+FFFD.
func FuzzRead(f *testing.F) {
	f.Add([]byte("a\nb\r\nc"), 1, 2)
	f.Add([]byte("caf\xe9\n\nx\r\r\n"), 2, 3)
	f.Add([]byte(strings.Repeat("é", 1200)+"\nz\n"), 1, 1)
	f.Add([]byte("\n\n\n"), 3, 5)
	f.Fuzz(func(t *testing.T, content []byte, offset, limit int) {
		if offset < 1 || limit < 1 || limit > 50 {
			return
		}
		p := filepath.Join(t.TempDir(), "f.txt")
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		res := runToolResult(t, NewRead(Config{}), map[string]any{"file_path": p, "offset": offset, "limit": limit})
		lines := strings.SplitAfter(string(content), "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		switch {
		case len(content) == 0:
			return
		case looksBinary(content[:min(len(content), sniffLen)], true):
			if !res.IsError || !strings.Contains(res.Content, "binary") {
				t.Fatalf("Read of binary %q = %q; want it refused", content, res.Content)
			}
			return
		case offset > len(lines):
			if !res.IsError || !strings.Contains(res.Content, "past the end") {
				t.Fatalf("Read(%q, offset %d) = %q; want past the end", content, offset, res.Content)
			}
			return
		}
		var want strings.Builder
		for i := offset - 1; i < min(len(lines), offset-1+limit); i++ {
			l := strings.TrimSuffix(lines[i], "\n")
			if len(l) <= maxLineLen+2 { // a line Read cuts keeps its "\r"
				l = strings.TrimSuffix(l, "\r")
			}
			cut := l
			if len(l) > maxLineLen {
				cut = string(trimIncompleteRune([]byte(l[:maxLineLen])))
			}
			text := strings.ToValidUTF8(cut, "\ufffd")
			if len(cut) < len(l) {
				text += fmt.Sprintf(" ... [line truncated: %s more]", size(int64(len(l)-len(cut))))
			}
			fmt.Fprintf(&want, "%6d\t%s\n", i+1, text)
		}
		rest, ok := strings.CutPrefix(res.Content, want.String())
		if res.IsError || !ok || rest != "" && !strings.HasPrefix(rest, "\n[") {
			t.Fatalf("Read(%q, offset %d, limit %d) = %q; want the lines %q then notes", content, offset, limit, res.Content, want.String())
		}
	})
}

// runToolResult runs tl with input, failing only on a Go error.
func runToolResult(tb testing.TB, tl tool.Tool, input map[string]any) tool.Result {
	tb.Helper()
	raw, _ := json.Marshal(input)
	res, err := tl.Run(context.Background(), tool.Call{ID: "f", Name: tl.Spec().Name, Input: raw})
	if err != nil {
		tb.Fatalf("%s(%s): %v", tl.Spec().Name, raw, err)
	}
	return res
}
