package file

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"

	"github.com/troupe-dev/troupe/team"
)

// membersKey is where the member array sits in an indented team file: a
// top-level key is the only line that starts with exactly two spaces and
// a quote (nested keys have four or more, and a quote inside a string is
// escaped).
var membersKey = []byte("\n  \"members\": []")

// encodeConfig returns the team file for c: the bytes of
// json.MarshalIndent(c, "", "  "), byte for byte. Members equal to those
// at the same place in prev (the snapshot c was made from) reuse their
// encoding, so a team update that flips one member's flag encodes one
// member, not the whole roster (in a team of a thousand, encoding the
// roster was most of an update's cost). It also returns each member's
// encoding, for the next update: slices of data, so that a kept snapshot
// holds the roster's bytes once (not again in one buffer per member, with
// its spare capacity) and never holds an older snapshot's bytes.
func encodeConfig(c team.Config, prev *teamSnap) (data []byte, members [][]byte, err error) {
	top := c
	top.Members = nil
	head, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	at := bytes.Index(head, membersKey)
	if at < 0 || bytes.Index(head[at+1:], membersKey) >= 0 {
		return nil, nil, errors.New("encode team file: members key not found once") // cannot happen
	}
	cut := at + len(membersKey) - 1 // at the ']' of "[]"
	members = make([][]byte, len(c.Members))
	size := len(head)
	for i, m := range c.Members {
		if prev != nil && i < len(prev.members) && prev.members[i] != nil && i < len(prev.cfg.Members) && sameMember(prev.cfg.Members[i], m) {
			members[i] = prev.members[i]
		} else if members[i], err = encodeMember(m); err != nil {
			return nil, nil, err
		}
		size += len(members[i]) + 6
	}
	out := make([]byte, 0, size+4)
	out = append(out, head[:cut]...)
	offs := make([]int, len(members))
	for i, b := range members {
		out = append(out, "\n    "...)
		offs[i] = len(out)
		out = append(out, b...)
		if i < len(members)-1 {
			out = append(out, ',')
		}
	}
	for i, b := range members {
		members[i] = out[offs[i] : offs[i]+len(b) : offs[i]+len(b)]
	}
	if len(members) > 0 {
		out = append(out, "\n  "...)
	}
	out = append(out, head[cut:]...)
	return out, members, nil
}

// encodeMember returns m as it appears in an indented team file: indented
// as an element of the members array, without its leading indentation.
func encodeMember(m team.Member) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "    ", "  "); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// memberFields is the number of fields of team.Member that sameMember
// compares; a test fails when the type grows, so that a new field is never
// left out of the comparison (its change would then not be written).
const memberFields = 15

// sameMember reports whether a and b encode the same way.
func sameMember(a, b team.Member) bool {
	return a.AgentID == b.AgentID && a.Name == b.Name && a.AgentType == b.AgentType &&
		a.Model == b.Model && a.Prompt == b.Prompt && a.Color == b.Color &&
		a.PlanModeRequired == b.PlanModeRequired && a.JoinedAt == b.JoinedAt &&
		a.TmuxPaneID == b.TmuxPaneID && a.Cwd == b.Cwd &&
		slices.Equal(a.Subscriptions, b.Subscriptions) && a.BackendType == b.BackendType &&
		(a.IsActive == nil) == (b.IsActive == nil) && (a.IsActive == nil || *a.IsActive == *b.IsActive) &&
		a.Mode == b.Mode && maps.EqualFunc(a.Extra, b.Extra, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) })
}

// shareMembers replaces each member of c, just decoded, that equals the
// member at the same place in prev (an older snapshot of the same file)
// with prev's, so that snapshots share the strings of the members that did
// not change: a host keeps a few snapshots of a thousand-member roster,
// each decoded after another process changed one member. Snapshots are
// never modified (callers clone them), so sharing is safe.
func shareMembers(c, prev *team.Config) {
	for i := range min(len(c.Members), len(prev.Members)) {
		if sameMember(prev.Members[i], c.Members[i]) {
			c.Members[i] = prev.Members[i]
		}
	}
}
