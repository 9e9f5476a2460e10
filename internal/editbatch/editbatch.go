// Package editbatch writes the roster edits of one team together (members
// added, active flags flipped): the edits asked for while one update is
// being written go into the next update. The teammates of one process
// going idle at once (a thousand, after a drain) rewrite the team a few
// times, not a thousand, and a spawn's add carries the flips asked for
// meanwhile; each rewrite holds the team's lock and writes the whole
// roster. A store that updates a team through a function (team.Store's
// Update) uses it to implement team.Editor.
//
// A Batches is safe for concurrent use.
package editbatch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/troupe-dev/troupe/team"
)

// Update is a store's team update (team.Store.Update).
type Update func(ctx context.Context, name string, fn func(*team.Config) error) (team.Config, error)

// Batches holds the pending edits of each team. The zero value is ready
// to use.
type Batches struct {
	mu      sync.Mutex
	batches map[string]*batch // guarded by mu; by team
}

// batch is the edits of one team waiting to be written.
type batch struct {
	commit chan struct{} // 1-slot: held by the caller writing a round

	mu      sync.Mutex
	pending []*Pending // guarded by mu
}

// Pending is one caller's edit waiting to be written.
type Pending struct {
	Ctx  context.Context // the caller's
	Edit team.Edit
	done chan struct{}
	m    team.Member // set before done closes
	err  error       // set before done closes
}

// Finish hands p its result: the member as stored, a copy its caller
// owns, or its error. A Commit calls it once for every edit of its round.
func (p *Pending) Finish(m team.Member, err error) {
	p.m, p.err = m, err
	close(p.done)
}

// Commit writes the edits of round to team teamName in one write, in
// order, and finishes each (Pending.Finish).
type Commit func(teamName string, round []*Pending)

// Do queues e and returns its result once written: the caller that takes
// the team's commit slot runs commit on every edit pending then, its own
// and those asked for while the previous round was being written. A
// caller whose ctx ends before its edit is taken into a round gets ctx's
// error and the edit is dropped; one whose ctx ends later gets ctx's
// error, but its edit may still be stored.
func (bs *Batches) Do(ctx context.Context, teamName string, e team.Edit, commit Commit) (team.Member, error) {
	b := bs.batch(teamName)
	p := &Pending{Ctx: ctx, Edit: e, done: make(chan struct{})}
	b.mu.Lock()
	b.pending = append(b.pending, p)
	b.mu.Unlock()
	for {
		select {
		case <-p.done:
			return p.m, p.err
		case b.commit <- struct{}{}:
			b.mu.Lock()
			round := b.pending
			b.pending = nil
			b.mu.Unlock()
			if len(round) > 0 {
				commit(teamName, round)
			}
			<-b.commit
		case <-ctx.Done():
			b.mu.Lock()
			i := slices.Index(b.pending, p)
			if i >= 0 {
				b.pending = slices.Delete(b.pending, i, i+1)
			}
			b.mu.Unlock()
			if i >= 0 {
				return team.Member{}, fmt.Errorf("%v in team %s: %w", e, teamName, context.Cause(ctx))
			}
			// Taken into a round being written: it may still be stored,
			// but the caller does not wait for that round's write.
			return team.Member{}, fmt.Errorf("%v in team %s (may still be stored): %w", e, teamName, context.Cause(ctx))
		}
	}
}

// Round is the live edits of one commit and their results: a Commit
// makes it (NewRound), applies the edits to its copy of the roster inside
// its write (Apply, again if the write runs again), and hands each its
// result (Finish).
type Round struct {
	team string
	live []*Pending
	ms   []team.Member
	errs []error
}

// NewRound finishes with its ctx's error each edit of round whose ctx
// ended, and returns the others, or nil when none is left, with the
// context of the round's write: the last live caller's values without its
// cancellation, since the others' edits ride on the write (the stores
// bound their lock waits).
func NewRound(teamName string, round []*Pending) (*Round, context.Context) {
	r := &Round{team: teamName}
	ctx := context.Background()
	for _, p := range round {
		if p.Ctx.Err() != nil {
			p.Finish(team.Member{}, p.ended(teamName))
			continue
		}
		r.live = append(r.live, p)
		ctx = p.Ctx
	}
	if len(r.live) == 0 {
		return nil, nil
	}
	r.ms, r.errs = make([]team.Member, len(r.live)), make([]error, len(r.live))
	return r, context.WithoutCancel(ctx)
}

// Apply applies the round's edits in order with one, which applies an
// edit to the committer's copy of the roster, and keeps each result; an
// edit whose ctx ended meanwhile (while the lock was taken) is skipped
// with ctx's error. A store may run its write again on a newer copy (a
// stale read on a cluster): only the last Apply's results count.
func (r *Round) Apply(one func(team.Edit) (team.Member, error)) {
	for i, p := range r.live {
		if p.Ctx.Err() != nil {
			r.ms[i], r.errs[i] = team.Member{}, p.ended(r.team)
			continue
		}
		r.ms[i], r.errs[i] = one(p.Edit)
	}
}

// Finish hands each edit its result: err, the write's, fails them all;
// otherwise each gets its own member (a copy) or refusal.
func (r *Round) Finish(err error) {
	for i, p := range r.live {
		if err != nil {
			p.Finish(team.Member{}, err)
		} else {
			p.Finish(r.ms[i].Clone(), r.errs[i])
		}
	}
}

// ended is the error of an edit whose ctx ended before its write.
func (p *Pending) ended(teamName string) error {
	return fmt.Errorf("%v in team %s: %w", p.Edit, teamName, context.Cause(p.Ctx))
}

// Edit is Do with the round written by update (team.Editor for a store
// that updates a team through a function): e's own refusal (a name
// taken, no such member) fails e alone; the update's error fails every
// edit of the round.
func (bs *Batches) Edit(ctx context.Context, update Update, teamName string, e team.Edit) (team.Member, error) {
	return bs.Do(ctx, teamName, e, func(teamName string, round []*Pending) { writeThrough(update, teamName, round) })
}

// writeThrough writes round in one update.
func writeThrough(update Update, teamName string, round []*Pending) {
	r, ctx := NewRound(teamName, round)
	if r == nil {
		return
	}
	_, err := update(ctx, teamName, func(c *team.Config) error {
		changed := false
		r.Apply(func(e team.Edit) (team.Member, error) {
			ch, err := e.Apply(c.Name, team.MemberList(c.Members))
			switch {
			case err != nil:
				return team.Member{}, err
			case ch.None:
			case ch.Index == len(c.Members):
				c.Members = append(c.Members, ch.Member)
				changed = true
			default:
				c.Members[ch.Index] = ch.Member
				changed = true
			}
			return ch.Member, nil
		})
		if !changed {
			return errUnchanged
		}
		return nil
	})
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	r.Finish(err)
}

// errUnchanged aborts an update whose edits were all in place already.
var errUnchanged = errors.New("no edit changes the roster")

func (bs *Batches) batch(teamName string) *batch {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if bs.batches == nil {
		bs.batches = map[string]*batch{}
	}
	b := bs.batches[teamName]
	if b == nil {
		b = &batch{commit: make(chan struct{}, 1)}
		bs.batches[teamName] = b
	}
	return b
}
