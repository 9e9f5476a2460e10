package file

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/troupe-dev/troupe/team"
)

var _ team.ActiveSetter = (*Teams)(nil)

// SetActive marks member name of team teamName active or idle
// (team.ActiveSetter). The flips that this store's callers ask for while
// one is being written are written together in the next update, so that
// the teammates of one process going idle at once (a thousand, after a
// drain) take the team's lock a few times, not a thousand: each update
// rewrites the whole team file. It returns once its flip is on disk; a
// member no longer on the roster gives team.ErrNoMember. A caller whose
// ctx ends while it waits gets ctx's error, but its flip may still be
// written.
func (ts *Teams) SetActive(ctx context.Context, teamName, name string, active bool) error {
	if err := ts.begin("update", teamName); err != nil {
		return err
	}
	b := ts.s.flags.batch(teamName)
	b.mu.Lock()
	if b.round == nil {
		b.round = &flagRound{done: make(chan struct{}), errs: map[string]error{}}
	}
	r := b.round
	b.pending[name] = active
	b.mu.Unlock()
	for {
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
			ts.commitFlags(ctx, teamName, b)
			<-b.commit
			return r.result(name)
		case <-ctx.Done():
			return fmt.Errorf("mark %s active=%v in team %s: %w", name, active, teamName, context.Cause(ctx))
		}
	}
}

// commitFlags writes every pending flip of b in one update. The caller
// holds b.commit.
func (ts *Teams) commitFlags(ctx context.Context, teamName string, b *flagBatch) {
	b.mu.Lock()
	flips, r := b.pending, b.round
	b.pending, b.round = map[string]bool{}, nil
	b.mu.Unlock()
	defer close(r.done)
	// The others' flips ride on this write: it is not cut short with the
	// committer's ctx (the store bounds its lock wait).
	_, err := ts.Update(context.WithoutCancel(ctx), teamName, func(c *team.Config) error {
		changed := false
		for name, active := range flips {
			m, ok := c.Member(name)
			if !ok {
				r.errs[name] = fmt.Errorf("team %s has no member %q: %w", c.Name, name, team.ErrNoMember)
				continue
			}
			if m.IsActive == nil || *m.IsActive != active {
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

// flagBatches holds the flip batches of each team.
type flagBatches struct {
	mu      sync.Mutex
	batches map[string]*flagBatch // guarded by mu; by team
}

func (fb *flagBatches) batch(teamName string) *flagBatch {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if fb.batches == nil {
		fb.batches = map[string]*flagBatch{}
	}
	b := fb.batches[teamName]
	if b == nil {
		b = &flagBatch{commit: make(chan struct{}, 1), pending: map[string]bool{}}
		fb.batches[teamName] = b
	}
	return b
}

// flagBatch is the flips of one team waiting to be written.
type flagBatch struct {
	commit chan struct{} // 1-slot: held by the caller writing a round

	mu      sync.Mutex
	pending map[string]bool // guarded by mu; member name -> wanted flag
	round   *flagRound      // guarded by mu; the round pending flips belong to
}

// flagRound is one write of a batch of flips.
type flagRound struct {
	done chan struct{}    // closed once written (or failed)
	err  error            // the update's error; set before done closes
	errs map[string]error // per member; written before done closes
}

func (r *flagRound) result(name string) error {
	if r.err != nil {
		return r.err
	}
	return r.errs[name]
}
