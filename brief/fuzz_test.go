package brief

import (
	"strings"
	"testing"
	"unicode"
)

// FuzzImports: the @path parser of instruction files never panics, and
// every path it returns is written in the text, has no space in it, and
// was not inside a code span on its line.
func FuzzImports(f *testing.F) {
	for _, s := range []string{"See @docs/a.md.", "`@x/y.md` @z.md", "```\n@in/fence.md\n```\n@out/f.md", "@~/.claude/x.md (@../up.md)", "@", "a@b.c", "@@/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, p := range imports(text) {
			if p == "" || strings.ContainsFunc(p, unicode.IsSpace) {
				t.Fatalf("imports(%q) gave %q", text, p)
			}
			if !strings.Contains(text, "@"+p) {
				t.Fatalf("imports(%q) gave %q, which the text does not reference", text, p)
			}
		}
	})
}

// FuzzToolList: ToolList keeps every byte but the separators outside
// parentheses, in order, and makes no empty entry.
func FuzzToolList(f *testing.F) {
	for _, s := range []string{"Read Grep", "Read, Bash(git diff *)", "Bash(a (b) c)", "((", ")) Read", "Bash(git diff", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var kept strings.Builder
		depth := 0
		for i := range len(s) { // the separators are ASCII: bytes will do
			switch c := s[i]; {
			case c == '(':
				depth++
			case c == ')' && depth > 0:
				depth--
			case depth == 0 && (c == ' ' || c == '\t' || c == ','):
				continue
			}
			kept.WriteByte(s[i])
		}
		got := ToolList([]string{s})
		for _, e := range got {
			if e == "" {
				t.Errorf("ToolList(%q) = %q: an empty entry", s, got)
			}
		}
		if j := strings.Join(got, ""); j != kept.String() {
			t.Errorf("ToolList(%q) = %q; joined %q, want %q", s, got, j, kept.String())
		}
	})
}
