package teamtool

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

// target is where a SendMessage `to` points, decided by resolve.
type target struct {
	Name      string // member name, or mailbox.Broadcast
	Color     string // the member's color
	Member    bool   // Name is on the roster (or a broadcast)
	Broadcast bool
}

// resolve decides where to points for the caller self in team c, without
// I/O: "*" is a broadcast, "main" and "team-lead" (any case) the lead, an
// agent id "name@team" of the caller's team its name, a member name
// (matched case-insensitively) that member. Anything else is returned with
// Member false: a sub-agent id or name, or a mistake. An agent id of
// another team, and the caller itself, are errors.
func resolve(to string, self Self, c team.Config) (target, error) {
	if to == mailbox.Broadcast {
		return target{Name: mailbox.Broadcast, Member: true, Broadcast: true}, nil
	}
	name := to
	if n, tm, err := team.ParseAgentID(to); err == nil {
		if tm != self.Team && team.Sanitize(tm) != team.Sanitize(self.Team) {
			return target{}, fmt.Errorf("%q is an agent of team %q; you can only message members of your team %q", to, tm, self.Team)
		}
		name = n
	}
	switch strings.ToLower(name) {
	case "main", team.LeadName:
		name = team.LeadName
	}
	var found *team.Member
	for i := range c.Members {
		if strings.EqualFold(c.Members[i].Name, name) {
			found = &c.Members[i]
			if c.Members[i].Name == name {
				break // an exact match wins over a case-insensitive one
			}
		}
	}
	if found == nil {
		return target{Name: to}, nil
	}
	if found.Name == self.Name {
		return target{}, fmt.Errorf("%q is you; a message to yourself is not delivered", to)
	}
	return target{Name: found.Name, Color: found.Color, Member: true}, nil
}

// teammateTerminated is the one lifecycle frame of docs/protocol.md section 6.6 that
// neither mailbox.Decode nor mailbox.ProtocolKind knows; only the runtime
// writes it.
const teammateTerminated = "teammate_terminated"

// frameType returns the protocol frame type that text would be read as, or
// "" when it is plain text: a frame mailbox.Decode knows, one of
// docs/protocol.md section 6.6's protocol list (mailbox.ProtocolKind), or
// teammate_terminated. Receivers treat them as protocol, so only the
// tools that own them may write them.
func frameType(text string) string {
	f, err := mailbox.Decode(text)
	if err != nil {
		// It claims a known kind but does not fit it: receivers would
		// still take it for that kind.
		if t := typeField(text); t != "" {
			return t
		}
		return "malformed frame"
	}
	if k := f.Kind(); k != "" {
		return k
	}
	if k := mailbox.ProtocolKind(text); k != "" {
		return k
	}
	if t := typeField(text); t == teammateTerminated {
		return t
	}
	return ""
}

// typeField returns the "type" string of a JSON object text, or "".
func typeField(text string) string {
	var v struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &v); err != nil {
		return ""
	}
	s, _ := v.Type.(string)
	return s
}

// summarize returns the first non-blank line of text, cut to
// mailbox.MaxSummaryLen bytes on a rune boundary.
func summarize(text string) string {
	for line := range strings.Lines(text) {
		if line = strings.TrimSpace(line); line != "" {
			return cut(line, mailbox.MaxSummaryLen)
		}
	}
	return ""
}

// cut shortens s to at most n bytes without splitting a rune.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
