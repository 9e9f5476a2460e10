package file

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/troupe-dev/troupe/internal/editbatch"
	"github.com/troupe-dev/troupe/team"
)

var _ team.Editor = (*Teams)(nil)

// draft is a snapshot being edited: it shares the base snapshot's roster
// until a member is replaced (then it copies the slice of pointers, not
// the members) and appends in place where it can (grow).
type draft struct {
	base        *teamSnap
	members     []*memberEntry
	membersUsed *atomic.Int32
	own         bool // members is this draft's copy
	names       []string
	namesUsed   *atomic.Int32
	changed     bool
}

func newDraft(base *teamSnap) *draft {
	return &draft{base: base, members: base.members, membersUsed: base.membersUsed, names: base.names, namesUsed: base.namesUsed}
}

func (d *draft) Len() int              { return len(d.members) }
func (d *draft) At(i int) *team.Member { return &d.members[i].m }

// set replaces member i with e.
func (d *draft) set(i int, e *memberEntry) {
	if !d.own {
		out, used := makeRoom[*memberEntry](len(d.members))
		copy(out, d.members)
		d.members, d.membersUsed, d.own = out, used, true
	}
	d.members[i] = e
	d.changed = true
}

// add appends e.
func (d *draft) add(e *memberEntry) {
	d.members, d.membersUsed = grow(d.members, d.membersUsed, e)
	d.names, d.namesUsed = grow(d.names, d.namesUsed, e.m.Name)
	d.changed = true
}

// apply decides e and stores its change in d, returning the member as
// stored (shared: the caller copies it before handing it out).
func (d *draft) apply(e team.Edit) (team.Member, error) {
	ch, err := e.Apply(d.base.cfg.Name, d)
	if err != nil || ch.None {
		return ch.Member, err
	}
	enc, err := encodeMember(ch.Member)
	if err != nil {
		return team.Member{}, fmt.Errorf("%v: %w", e, err)
	}
	entry := &memberEntry{m: ch.Member, enc: enc, canon: true}
	if ch.Index == len(d.members) {
		d.add(entry)
	} else {
		d.set(ch.Index, entry)
	}
	return ch.Member, nil
}

// snap returns the snapshot d makes: its members encoded where the base
// did not know their canonical encoding (a file another program wrote).
func (d *draft) snap() (*teamSnap, error) {
	for i, e := range d.members {
		if !e.canon {
			enc, err := encodeMember(e.m)
			if err != nil {
				return nil, err
			}
			d.set(i, &memberEntry{m: e.m, enc: enc, canon: true})
		}
	}
	head, tail := d.base.head, d.base.tail
	if d.base.raw != nil {
		var err error
		if head, tail, err = encodeHead(d.base.cfg); err != nil {
			return nil, err
		}
	}
	out := &teamSnap{cfg: d.base.cfg, names: d.names, namesUsed: d.namesUsed, members: d.members, membersUsed: d.membersUsed, head: head, tail: tail}
	out.size = out.writtenSize()
	return out, nil
}

// Edit applies e to team name and writes the result (team.Editor),
// encoding only the member that changed. The edits that this store's
// callers ask for while one is being written are applied together and
// written in the next write (internal/editbatch), so that the teammates of one
// process going idle at once, or spawns meanwhile, take the team's lock a
// few times, not once each. An edit whose ctx ends before its write is
// dropped and gives ctx's error. It returns e's errors as they are
// (team.ErrMemberExists, team.ErrNoMember) and team.ErrNotFound for a
// missing team.
func (ts *Teams) Edit(ctx context.Context, name string, e team.Edit) (team.Member, error) {
	if err := ts.begin("update", name); err != nil {
		return team.Member{}, err
	}
	return ts.s.edits.Do(ctx, name, e, ts.applyEdits)
}

// applyEdits applies a round of edits of team name in order and writes
// them in one update, then hands each its result (an editbatch.Commit).
func (ts *Teams) applyEdits(name string, round []*editbatch.Pending) {
	r, ctx := editbatch.NewRound(name, round)
	if r == nil {
		return
	}
	r.Finish(ts.write(ctx, name, func(snap *teamSnap) (*teamSnap, error) {
		d := newDraft(snap)
		r.Apply(d.apply)
		if !d.changed {
			return nil, nil
		}
		return d.snap()
	}))
}
