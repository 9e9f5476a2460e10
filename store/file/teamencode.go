package file

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/troupe-dev/troupe/internal/atomicfile"
	"github.com/troupe-dev/troupe/team"
)

// A team file as this store writes it is json.MarshalIndent(c, "", "  ")
// byte for byte (Claude Code's layout). A snapshot keeps it in pieces: the
// top-level fields up to the member array's '[' (head), each member's
// encoding, and the rest (tail), so that a change to one member encodes
// that member only, and the next snapshot shares the others' encodings.

// membersKey is where the member array sits in an indented team file: a
// top-level key is the only line that starts with exactly two spaces and
// a quote (nested keys have four or more, and a quote inside a string is
// escaped).
var membersKey = []byte("\n  \"members\": []")

// The bytes between the pieces of an indented member array.
var (
	sepFirst   = []byte("\n    ")
	sepNext    = []byte(",\n    ")
	closeArray = []byte("\n  ")
)

// encodeHead returns the team file of c's top-level fields cut at the
// member array: head ends with its '[', tail starts with its ']'.
func encodeHead(c team.Config) (head, tail []byte, err error) {
	c.Members = nil
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	at := bytes.Index(b, membersKey)
	if at < 0 || bytes.Index(b[at+1:], membersKey) >= 0 {
		return nil, nil, errors.New("encode team file: members key not found once") // cannot happen
	}
	cut := at + len(membersKey) - 1 // at the ']' of "[]"
	return b[:cut:cut], b[cut:], nil
}

// encodeMember returns m as it appears in an indented team file: indented
// as an element of the members array, without its leading indentation.
func encodeMember(m team.Member) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(len(b) + len(b)/2)
	if err := json.Indent(&buf, b, "    ", "  "); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encodeSnap returns the snapshot this store writes for c. Members equal
// to those at the same place in prev (the snapshot c was made from; nil
// for none) keep prev's entries and encodings, so an update that changes
// one member encodes one member. Unless shared is true (c is the caller's
// to keep, as Update hands it back), the new entries take c's members as
// they are, without a copy.
func encodeSnap(c team.Config, prev *teamSnap, shared bool) (*teamSnap, error) {
	head, tail, err := encodeHead(c)
	if err != nil {
		return nil, err
	}
	top := c
	top.Members = nil
	if shared {
		top = top.Clone()
		top.Members = nil
	}
	n := len(c.Members)
	snap := &teamSnap{cfg: top, head: head, tail: tail}
	snap.members, snap.membersUsed = makeRoom[*memberEntry](n)
	for i, m := range c.Members {
		if prev != nil && i < len(prev.members) && prev.members[i].canon && sameMember(prev.members[i].m, m) {
			snap.members[i] = prev.members[i]
			continue
		}
		if shared {
			m = m.Clone()
		}
		enc, err := encodeMember(m)
		if err != nil {
			return nil, err
		}
		snap.members[i] = &memberEntry{m: m, enc: enc, canon: true}
	}
	snap.names, snap.namesUsed = rosterNames(snap.members, prev)
	snap.size = snap.writtenSize()
	return snap, nil
}

// encodeConfig returns the team file for c: json.MarshalIndent(c, "", "  ").
func encodeConfig(c team.Config) ([]byte, error) {
	snap, err := encodeSnap(c, nil, false)
	if err != nil {
		return nil, err
	}
	return snap.appendTo(nil), nil
}

// makeRoom returns a slice of length n with room to grow, and its count
// of taken slots (see teamSnap.membersUsed).
func makeRoom[T any](n int) ([]T, *atomic.Int32) {
	used := new(atomic.Int32)
	used.Store(int32(n))
	return make([]T, n, n+n/4+8), used
}

// grow appends v to s, in place when s ends at the last taken slot of its
// array (used counts them) and the array has room, else in a copy with
// room; it returns the new slice and its count.
func grow[T any](s []T, used *atomic.Int32, v T) ([]T, *atomic.Int32) {
	n := len(s)
	if n < cap(s) && used != nil && used.CompareAndSwap(int32(n), int32(n+1)) {
		s = s[:n+1]
		s[n] = v
		return s, used
	}
	out, used := makeRoom[T](n + 1)
	copy(out, s)
	out[n] = v
	return out, used
}

// writtenSize returns the length of the file snap, written, holds.
func (snap *teamSnap) writtenSize() int {
	size := len(snap.head) + len(snap.tail)
	for i, e := range snap.members {
		size += len(e.enc) + len(sepNext)
		if i == 0 {
			size += len(sepFirst) - len(sepNext) + len(closeArray)
		}
	}
	return size
}

// pieces returns the number of pieces of snap's bytes (piece).
func (snap *teamSnap) pieces() int {
	if snap.raw != nil {
		return 1
	}
	return 2*len(snap.members) + 3
}

// piece returns the k-th piece of snap's bytes: the whole file when it was
// read (raw); else head, then a separator and an encoding per member, the
// array's closing indentation (none when it is empty) and tail.
func (snap *teamSnap) piece(k int) []byte {
	if snap.raw != nil {
		return snap.raw
	}
	n := len(snap.members)
	switch {
	case k == 0:
		return snap.head
	case k <= 2*n && k%2 == 1:
		if k == 1 {
			return sepFirst
		}
		return sepNext
	case k <= 2*n:
		return snap.members[k/2-1].enc
	case k == 2*n+1:
		if n > 0 {
			return closeArray
		}
		return nil
	default:
		return snap.tail
	}
}

// appendTo appends snap's bytes to b.
func (snap *teamSnap) appendTo(b []byte) []byte {
	b = slices.Grow(b, snap.size)
	for k := range snap.pieces() {
		b = append(b, snap.piece(k)...)
	}
	return b
}

// bytes returns a copy of snap's bytes.
func (snap *teamSnap) bytes() []byte { return snap.appendTo(nil) }

// equal reports whether snap's bytes are b.
func (snap *teamSnap) equal(b []byte) bool {
	if snap.size != len(b) {
		return false
	}
	c := cursor{s: snap}
	return c.equal(b) && c.done()
}

// sameBytes reports whether a and b hold the same bytes.
func sameBytes(a, b *teamSnap) bool {
	if a == b {
		return true
	}
	if a.size != b.size {
		return false
	}
	ca, cb := cursor{s: a}, cursor{s: b}
	for {
		p := ca.next(len(ca.s.raw) + readChunk)
		if len(p) == 0 {
			return cb.done()
		}
		if !cb.equal(p) {
			return false
		}
	}
}

// cursor walks a snapshot's bytes.
type cursor struct {
	s   *teamSnap
	k   int // piece
	off int // in the piece
}

// next returns up to n of the following bytes (fewer at a piece's end);
// none at the end.
func (c *cursor) next(n int) []byte {
	for c.k < c.s.pieces() {
		p := c.s.piece(c.k)
		if c.off < len(p) {
			b := p[c.off:min(len(p), c.off+n)]
			c.off += len(b)
			return b
		}
		c.k, c.off = c.k+1, 0
	}
	return nil
}

// equal consumes len(b) bytes and reports whether they are b.
func (c *cursor) equal(b []byte) bool {
	for len(b) > 0 {
		p := c.next(len(b))
		if len(p) == 0 || !bytes.Equal(p, b[:len(p)]) {
			return false
		}
		b = b[len(p):]
	}
	return true
}

// done reports whether c is at the end of the bytes.
func (c *cursor) done() bool { return len(c.next(1)) == 0 }

// config returns the team snap holds, a deep copy the caller owns.
func (snap *teamSnap) config() team.Config {
	c := snap.cfg.Clone()
	c.Members = make([]team.Member, len(snap.members), len(snap.members)+1)
	for i, e := range snap.members {
		c.Members[i] = e.m.Clone()
	}
	return c
}

// withID returns a copy of snap read at seen, with the file's identity.
func (snap *teamSnap) withID(id atomicfile.Identity, seen time.Time) *teamSnap {
	out := *snap
	out.id, out.seen = id, seen
	return &out
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
