package file

import (
	"bytes"
	"sync/atomic"

	"github.com/troupe-dev/troupe/team"
)

// decodeSnap decodes a team file as json.Unmarshal into a team.Config
// does, decoding only the members whose bytes differ from those prev's
// were decoded from or encoded to (team.DecodeEach): every host of a
// team read the file after each change another host made, and decoded the
// whole roster. The members that did not change keep prev's entries. The
// snapshot holds data as its bytes.
func decodeSnap(data []byte, prev *teamSnap) (*teamSnap, error) {
	n := 0
	if prev != nil {
		n = len(prev.members)
	}
	var fresh []*memberEntry // the decoded members, in order
	var at []int             // and their places in the roster
	c, spans, reused, err := team.DecodeEach(data, n, func(i int, b []byte) bool {
		e := prev.members[i]
		return e.enc != nil && bytes.Equal(e.enc, b)
	}, func(i int, m team.Member) {
		fresh, at = append(fresh, &memberEntry{m: m}), append(at, i)
	})
	if err != nil {
		return nil, err
	}
	snap := &teamSnap{raw: data, size: len(data)}
	if spans == nil {
		// Decoded whole: share what did not change.
		snap.members, snap.membersUsed = makeRoom[*memberEntry](len(c.Members))
		for i, m := range c.Members {
			if i < n && sameMember(prev.members[i].m, m) {
				snap.members[i] = prev.members[i]
			} else {
				snap.members[i] = &memberEntry{m: m}
			}
		}
	} else {
		snap.members, snap.membersUsed = makeRoom[*memberEntry](len(reused))
		for i, r := range reused {
			if r {
				snap.members[i] = prev.members[i]
			}
		}
		// A decoded member keeps the bytes it was decoded from, to be
		// recognised in the next file: slices of data when most of the
		// file was decoded, else copies, so that a member changed by one
		// of many files does not keep that whole file alive.
		slice := len(fresh) > len(reused)/2
		for k, e := range fresh {
			i := at[k]
			if b := data[spans[i][0]:spans[i][1]:spans[i][1]]; slice {
				e.enc = b
			} else {
				e.enc = bytes.Clone(b)
			}
			snap.members[i] = e
		}
	}
	c.Members = nil
	snap.cfg = c
	snap.names, snap.namesUsed = rosterNames(snap.members, prev)
	return snap, nil
}

// rosterNames returns the names of members, prev's slice when they are
// its names.
func rosterNames(members []*memberEntry, prev *teamSnap) ([]string, *atomic.Int32) {
	if prev != nil && len(prev.names) == len(members) {
		same := true
		for i, e := range members {
			if prev.names[i] != e.m.Name {
				same = false
				break
			}
		}
		if same {
			return prev.names, prev.namesUsed
		}
	}
	names, used := makeRoom[string](len(members))
	for i, e := range members {
		names[i] = e.m.Name
	}
	return names, used
}
