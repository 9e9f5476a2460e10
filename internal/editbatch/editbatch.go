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

// Live finishes with its ctx's error each edit of round whose ctx ended,
// and returns the others with the context of the round's write: the last
// live caller's values without its cancellation, since the others' edits
// ride on the write (the stores bound their lock waits).
func Live(teamName string, round []*Pending) ([]*Pending, context.Context) {
	var live []*Pending
	ctx := context.Background()
	for _, p := range round {
		if dropped(teamName, p) {
			continue
		}
		live = append(live, p)
		ctx = p.Ctx
	}
	return live, context.WithoutCancel(ctx)
}

// dropped finishes p with its ctx's error when its ctx ended.
func dropped(teamName string, p *Pending) bool {
	if p.Ctx.Err() == nil {
		return false
	}
	p.Finish(team.Member{}, p.Err(teamName))
	return true
}

// Err is the error of an edit whose ctx ended before its write.
func (p *Pending) Err(teamName string) error {
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
	live, ctx := Live(teamName, round)
	if len(live) == 0 {
		return
	}
	ms, errs := make([]team.Member, len(live)), make([]error, len(live))
	_, err := update(ctx, teamName, func(c *team.Config) error {
		// A store may run this again on a newer copy (a stale read on a
		// cluster): only the last run's view of the roster counts.
		changed := false
		for i, p := range live {
			ms[i], errs[i] = team.Member{}, nil
			if p.Ctx.Err() != nil { // ended while the lock was taken
				errs[i] = p.Err(teamName)
				continue
			}
			ch, err := p.Edit.Apply(c.Name, team.MemberList(c.Members))
			switch {
			case err != nil:
				errs[i] = err
				continue
			case ch.None:
			case ch.Index == len(c.Members):
				c.Members = append(c.Members, ch.Member)
				changed = true
			default:
				c.Members[ch.Index] = ch.Member
				changed = true
			}
			ms[i] = ch.Member
		}
		if !changed {
			return errUnchanged
		}
		return nil
	})
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	for i, p := range live {
		if err != nil {
			p.Finish(team.Member{}, err)
		} else {
			p.Finish(ms[i].Clone(), errs[i])
		}
	}
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
