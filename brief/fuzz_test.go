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
