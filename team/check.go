package team

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// InboxName returns the inbox file name of the member called name
// ("<name>.json", after SanitizePath), as every store names it on disk.
func InboxName(name string) string { return SanitizePath(name) + ".json" }

// SameInbox reports whether members called a and b would share one inbox
// file: their sanitized names are equal, ignoring case (a case-insensitive
// file system, as on macOS, maps them to one file).
func SameInbox(a, b string) bool {
	// As strings.EqualFold(SanitizePath(a), SanitizePath(b)), without
	// building either: AddMember compares a new name with every member's.
	for a != "" && b != "" {
		ra, na := inboxRune(a)
		rb, nb := inboxRune(b)
		if ra != rb && !foldEqual(ra, rb) {
			return false
		}
		a, b = a[na:], b[nb:]
	}
	return a == "" && b == ""
}

// inboxRune returns the first rune of s as SanitizePath writes it, and its
// length in s.
func inboxRune(s string) (rune, int) {
	r, n := utf8.DecodeRuneInString(s)
	if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
		return r, n
	}
	return '-', n
}

// foldEqual reports whether two runes of SanitizePath's alphabet are equal
// ignoring case.
func foldEqual(a, b rune) bool {
	lower := func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	return lower(a) == lower(b)
}

// CheckMembers returns, for each member of c in roster order, why troupe
// considers it invalid, or nil: a name that fails ValidateAgentName, an
// agent id other than name@team, a color outside the Palette, or an inbox
// file shared with an earlier member. Team files written by other programs
// can hold such members; readers show them marked rather than hide them.
func (c *Config) CheckMembers() []error {
	out := make([]error, len(c.Members))
	for i, m := range c.Members {
		var why []string
		if err := ValidateAgentName(m.Name, m.Name == LeadName); err != nil {
			why = append(why, err.Error())
		}
		if want := AgentID(m.Name, c.Name); m.AgentID != want {
			why = append(why, fmt.Sprintf("agent id %q, want %q", m.AgentID, want))
		}
		if m.Color != "" && !slices.Contains(Palette[:], m.Color) {
			why = append(why, fmt.Sprintf("color %q is not in the palette", m.Color))
		}
		for _, prev := range c.Members[:i] {
			if SameInbox(prev.Name, m.Name) {
				why = append(why, fmt.Sprintf("shares inbox file %s with %q", InboxName(m.Name), prev.Name))
				break
			}
		}
		if len(why) > 0 {
			out[i] = fmt.Errorf("%s", strings.Join(why, "; "))
		}
	}
	return out
}
