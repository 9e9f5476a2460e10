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
	pending []*pending // guarded by mu
}

// pending is one caller's edit and, once done is closed, its result.
type pending struct {
	ctx  context.Context
	e    team.Edit
	done chan struct{}
	m    team.Member // set before done closes
	err  error       // set before done closes
}

// Edit applies e to team teamName through update, together with the edits
// other callers ask for meanwhile (team.Editor): it returns the member as
// stored, a copy the caller owns, once the write that carries e is done.
// e's own refusal (team.ErrMemberExists, team.ErrNoMember) fails e alone;
// the update's error fails every edit it carried. A caller whose ctx ends
// before its edit is taken into a write gets ctx's error and the edit is
// dropped; one whose ctx ends later gets ctx's error, but its edit may
// still be stored.
func (bs *Batches) Edit(ctx context.Context, update Update, teamName string, e team.Edit) (team.Member, error) {
	b := bs.batch(teamName)
	p := &pending{ctx: ctx, e: e, done: make(chan struct{})}
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
				write(ctx, update, teamName, round)
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
			return team.Member{}, fmt.Errorf("%v in team %s (may still be stored): %w", e, teamName, context.Cause(ctx))
		}
	}
}

// write stores the edits of round in one update and finishes each.
func write(ctx context.Context, update Update, teamName string, round []*pending) {
	var live []*pending
	for _, p := range round {
		if err := p.ctx.Err(); err != nil {
			p.finish(team.Member{}, fmt.Errorf("%v in team %s: %w", p.e, teamName, context.Cause(p.ctx)))
			continue
		}
		live = append(live, p)
	}
	if len(live) == 0 {
		return
	}
	// The others' edits ride on this write: it is not cut short with the
	// committer's ctx (the stores bound their lock waits).
	_, err := update(context.WithoutCancel(ctx), teamName, func(c *team.Config) error {
		// A store may run this again on a newer copy (a stale read on a
		// cluster): only the last run's view of the roster counts.
		changed := false
		for _, p := range live {
			p.m, p.err = team.Member{}, nil
			if err := p.ctx.Err(); err != nil {
				p.err = fmt.Errorf("%v in team %s: %w", p.e, teamName, context.Cause(p.ctx))
				continue
			}
			ch, err := p.e.Apply(c.Name, team.MemberList(c.Members))
			switch {
			case err != nil:
				p.err = err
				continue
			case ch.None:
			case ch.Index == len(c.Members):
				c.Members = append(c.Members, ch.Member)
				changed = true
			default:
				c.Members[ch.Index] = ch.Member
				changed = true
			}
			p.m = ch.Member
		}
		if !changed {
			return errUnchanged
		}
		return nil
	})
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	for _, p := range live {
		if err != nil {
			p.finish(team.Member{}, err)
		} else {
			p.finish(p.m.Clone(), p.err)
		}
	}
}

// errUnchanged aborts an update whose edits were all in place already.
var errUnchanged = errors.New("no edit changes the roster")

func (p *pending) finish(m team.Member, err error) {
	p.m, p.err = m, err
	close(p.done)
}

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
