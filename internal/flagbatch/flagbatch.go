// Package flagbatch writes the active-flag flips of many members of one
// team together: the flips asked for while one update is being written go
// into the next update, so that the teammates of one process going idle at
// once (a thousand, after a drain) rewrite the team a few times, not a
// thousand, each rewrite holding the team's lock and writing the whole
// roster. The stores use it to implement team.ActiveSetter.
//
// A Batches is safe for concurrent use.
package flagbatch

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/troupe-dev/troupe/team"
)

// Update is a store's team update (team.Store.Update).
type Update func(ctx context.Context, name string, fn func(*team.Config) error) (team.Config, error)

// Batches holds the pending flips of each team. The zero value is ready
// to use.
type Batches struct {
	mu      sync.Mutex
	batches map[string]*batch // guarded by mu; by team
}

// SetActive marks member name of team teamName active or idle through
// update, together with the flips other callers ask for meanwhile. It
// returns once its flip is stored; a member no longer on the roster gives
// team.ErrNoMember. A caller whose ctx ends while it waits gets ctx's
// error, but its flip may still be stored.
func (bs *Batches) SetActive(ctx context.Context, update Update, teamName, name string, active bool) error {
	b := bs.batch(teamName)
	b.mu.Lock()
	if b.round == nil {
		b.round = &round{done: make(chan struct{}), errs: map[string]error{}}
	}
	r := b.round
	b.pending[name] = active
	b.mu.Unlock()
	select {
	case <-r.done:
		return r.result(name)
	case b.commit <- struct{}{}:
		select {
		case <-r.done: // written by the committer before us
			<-b.commit
			return r.result(name)
		default:
		}
		b.write(ctx, update, teamName)
		<-b.commit
		return r.result(name)
	case <-ctx.Done():
		return fmt.Errorf("mark %s active=%v in team %s: %w", name, active, teamName, context.Cause(ctx))
	}
}

// write stores every pending flip of b in one update. The caller holds
// b.commit.
func (b *batch) write(ctx context.Context, update Update, teamName string) {
	b.mu.Lock()
	flips, r := b.pending, b.round
	b.pending, b.round = map[string]bool{}, nil
	b.mu.Unlock()
	defer close(r.done)
	// The others' flips ride on this write: it is not cut short with the
	// committer's ctx (the stores bound their lock waits).
	_, err := update(context.WithoutCancel(ctx), teamName, func(c *team.Config) error {
		// A store may run this again on a newer copy (a stale read on a
		// cluster): only the last run's view of the roster counts.
		clear(r.errs)
		changed := false
		for name, active := range flips {
			m, ok := c.Member(name)
			if !ok {
				r.errs[name] = fmt.Errorf("team %s has no member %q: %w", c.Name, name, team.ErrNoMember)
				continue
			}
			// An absent flag counts as active (team.Member.Active, as
			// Claude Code reads it): marking such a member active writes
			// nothing (a teammate added without the flag going to work).
			if m.Active() != active {
				m.IsActive = &active
				changed = true
			}
		}
		if !changed {
			return errNoFlip
		}
		return nil
	})
	if err != nil && !errors.Is(err, errNoFlip) {
		r.err = err
	}
}

// errNoFlip aborts an update whose flips were all in place already.
var errNoFlip = errors.New("no flag to change")

func (bs *Batches) batch(teamName string) *batch {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if bs.batches == nil {
		bs.batches = map[string]*batch{}
	}
	b := bs.batches[teamName]
	if b == nil {
		b = &batch{commit: make(chan struct{}, 1), pending: map[string]bool{}}
		bs.batches[teamName] = b
	}
	return b
}

// batch is the flips of one team waiting to be written.
type batch struct {
	commit chan struct{} // 1-slot: held by the caller writing a round

	mu      sync.Mutex
	pending map[string]bool // guarded by mu; member name -> wanted flag
	round   *round          // guarded by mu; the round pending flips belong to
}

// round is one write of a batch of flips.
type round struct {
	done chan struct{}    // closed once written (or failed)
	err  error            // the update's error; set before done closes
	errs map[string]error // per member; written before done closes
}

func (r *round) result(name string) error {
	if r.err != nil {
		return r.err
	}
	return r.errs[name]
}
