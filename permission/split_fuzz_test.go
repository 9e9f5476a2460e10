package permission

import (
	"strings"
	"testing"
)

// FuzzSplitRules: SplitRules keeps every byte but the separators outside
// parentheses, in order, and makes no empty entry.
func FuzzSplitRules(f *testing.F) {
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
			case depth == 0 && (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ','):
				continue
			}
			kept.WriteByte(s[i])
		}
		got := SplitRules(s)
		for _, e := range got {
			if e == "" {
				t.Errorf("SplitRules(%q) = %q: an empty entry", s, got)
			}
		}
		if j := strings.Join(got, ""); j != kept.String() {
			t.Errorf("SplitRules(%q) = %q; joined %q, want %q", s, got, j, kept.String())
		}
	})
}
