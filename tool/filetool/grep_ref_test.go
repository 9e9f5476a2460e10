package filetool

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// refFind is the reference search the fast one must agree with: the
// content split into lines, each line matched on its own with the regular
// expression (in multiline mode, the expression over the whole content,
// each line a match touches). It returns the 0-based numbers of the
// matched lines.
func refFind(re *regexp.Regexp, content string, multiline bool) []int {
	lines := strings.Split(content, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	var matched []int
	if !multiline {
		for i, l := range lines {
			if re.MatchString(strings.TrimSuffix(l, "\r")) {
				matched = append(matched, i)
			}
		}
		return matched
	}
	if len(lines) == 0 {
		return nil
	}
	var starts []int
	off := 0
	for _, l := range strings.SplitAfter(content, "\n")[:len(lines)] {
		starts = append(starts, off)
		off += len(l)
	}
	lineOf := func(pos int) int {
		return sort.Search(len(starts), func(i int) bool { return starts[i] > pos }) - 1
	}
	last := -1
	for _, loc := range re.FindAllStringIndex(content, -1) {
		for l := max(lineOf(loc[0]), last+1); l <= lineOf(max(loc[1]-1, loc[0])); l++ {
			matched = append(matched, l)
			last = l
		}
	}
	return matched
}

// fastFind runs the matcher and turns its line offsets into numbers.
func fastFind(m *matcher, content []byte, firstOnly bool) []int {
	offs := m.find(content, firstOnly, nil)
	starts := lineStarts(content)
	var nums []int
	for _, off := range offs {
		nums = append(nums, sort.SearchInts(starts, off))
	}
	return nums
}

func grepFlags(fold, multiline bool) string {
	flags := ""
	if fold {
		flags += "i"
	}
	if multiline {
		flags += "sm"
	}
	return flags
}

func FuzzGrepSearch(f *testing.F) {
	seeds := []struct {
		pattern, content string
		fold, multiline  bool
	}{
		{"Hello", "package a\nHello\nhello world\n", false, false},
		{"hello", "HELLO\r\nheLLo\nnothing", true, false},
		{`one$`, "one\r\ntwo\r\none", false, false},
		{`^$`, "\n\n\na\n", false, false},
		{`x*`, "abc\n\nx", false, false},
		{`\s+end`, "start\n end\nend", false, false},
		{`a\nb`, "a\nb\nab", false, true},
		{`start.*end`, "start\nmiddle\nend\n", false, true},
		{"kelvin", "\u212aelvin KELVIN", true, false},
		{"s\u017ft", "SST sst ſſt", true, false},
		{"\ufffd", "a\xffb\nok\n", false, false},
		{`\Afoo`, "foo\nfoo\n", false, false},
		{`bar\z`, "bar\nbar", false, false},
		{`(?m)^b`, "a\nb\n", false, false},
		{`é+x`, "éx\nÉX\n\xe9x", true, false},
		{`\bword\b`, "word\nsword\n a word.\n", false, false},
		{`[^a]`, "a\naa\n\n", false, false},
		{"", "", false, false},
	}
	for _, s := range seeds {
		f.Add(s.pattern, []byte(s.content), s.fold, s.multiline)
	}
	f.Fuzz(func(t *testing.T, pattern string, content []byte, fold, multiline bool) {
		flags := grepFlags(fold, multiline)
		m, err := newMatcher(pattern, flags, multiline)
		if err != nil {
			return
		}
		want := refFind(m.re, string(content), multiline)
		if got := fastFind(m, content, false); !slices.Equal(got, want) {
			t.Fatalf("find(%q, %q, flags %q) = %v; want %v", pattern, content, flags, got, want)
		}
		// First only: the first matched line (in multiline mode, the
		// lines of the first match), enough for files_with_matches.
		if got := fastFind(m, content, true); (len(got) == 0) != (len(want) == 0) || len(got) > len(want) || !slices.Equal(got, want[:len(got)]) {
			t.Fatalf("find(%q, %q, flags %q, first only) = %v; want the start of %v", pattern, content, flags, got, want)
		}
		// The same content split into a small tree, through the tool.
		if pattern == "" || len(content) > 4096 || bytes.IndexByte(content, 0) >= 0 {
			return
		}
		root := t.TempDir()
		var wantOut []string
		total, nfiles := 0, 0
		for i, part := range bytes.SplitN(content, []byte("\x01"), 3) {
			name := fmt.Sprintf("d%d/f%d.txt", i%2, i)
			p := filepath.Join(root, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, part, 0o644); err != nil {
				t.Fatal(err)
			}
			if n := len(refFind(m.re, string(part), multiline)); n > 0 {
				wantOut = append(wantOut, fmt.Sprintf("%s:%d", name, n))
				total += n
				nfiles++
			}
		}
		sort.Strings(wantOut)
		res := runTool(t, NewGrep(Config{Root: root, MaxReadBytes: 1 << 20}), map[string]any{
			"pattern": pattern, "-i": fold, "multiline": multiline, "output_mode": "count"})
		wantRes := fmt.Sprintf("No matches found for %q in %s", pattern, root)
		if nfiles > 0 {
			wantRes = strings.Join(wantOut, "\n") + fmt.Sprintf("\n\nFound %s in %s.", plural(total, "matching line"), plural(nfiles, "file"))
		}
		if res.Content != wantRes {
			t.Fatalf("Grep count %q (flags %q) on %q = %q; want %q", pattern, flags, content, res.Content, wantRes)
		}
	})
}

func TestRequiredLiteral(t *testing.T) {
	tests := []struct {
		pattern, flags string
		want           string // "" for none
		fold           bool
	}{
		{"ErrShortWrite", "", "ErrShortWrite", false},
		{`func \(\w+ \*\w+\) SetDeadline\(`, "", ") SetDeadline(", false},
		{"deadline exceeded", "i", "deadline exceeded", true},
		{"kiss", "i", "i", true}, // k and s have non-ASCII case variants
		{"a|b", "", "", false},
		{"(abc)+x?", "", "abc", false},
		{"x*", "", "", false},
		{"a\ufffdbc", "", "bc", false},
	}
	for _, tt := range tests {
		m, err := newMatcher(tt.pattern, tt.flags, false)
		if err != nil {
			t.Fatal(err)
		}
		got, fold := "", false
		if m.lit != nil {
			got, fold = string(m.lit.s), m.lit.fold
		}
		if got != tt.want || fold != tt.fold {
			t.Errorf("literal of %q (flags %q) = %q (fold %v); want %q (fold %v)", tt.pattern, tt.flags, got, fold, tt.want, tt.fold)
		}
	}
}
