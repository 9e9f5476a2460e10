package team

import (
	"fmt"
	"slices"
	"strings"
)

// InboxName returns the inbox file name of the member called name
// ("<name>.json", after SanitizePath), as every store names it on disk.
func InboxName(name string) string { return SanitizePath(name) + ".json" }

// SameInbox reports whether members called a and b would share one inbox
// file: their sanitized names are equal, ignoring case (a case-insensitive
// file system, as on macOS, maps them to one file).
func SameInbox(a, b string) bool { return strings.EqualFold(SanitizePath(a), SanitizePath(b)) }

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
