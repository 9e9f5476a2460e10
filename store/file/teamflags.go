package file

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/troupe-dev/troupe/team"
)

// editQueues group-commits the edits of each team: the edits asked for
// while one write of the team is under way go into the next write. The
// zero value is ready to use.
type editQueues struct {
	mu     sync.Mutex
	queues map[string]*editQueue // guarded by mu; by team
}

// editQueue is the edits of one team waiting to be written.
type editQueue struct {
	commit chan struct{} // 1-slot: held by the caller writing a round

	mu      sync.Mutex
	pending []*pendingEdit // guarded by mu
}

// pendingEdit is one caller's edit and, once done is closed, its result.
type pendingEdit struct {
	ctx  context.Context
	e    team.Edit
	done chan struct{}
	m    team.Member // set before done closes
	err  error       // set before done closes
}

func (p *pendingEdit) finish(m team.Member, err error) {
	p.m, p.err = m, err
	close(p.done)
}

// edit queues e and returns its result once written: the caller that
// takes the queue's commit slot writes every edit pending then.
func (eq *editQueues) edit(ctx context.Context, ts *Teams, name string, e team.Edit) (team.Member, error) {
	q := eq.queue(name)
	p := &pendingEdit{ctx: ctx, e: e, done: make(chan struct{})}
	q.mu.Lock()
	q.pending = append(q.pending, p)
	q.mu.Unlock()
	for {
		select {
		case <-p.done:
			return p.m, p.err
		case q.commit <- struct{}{}:
			q.mu.Lock()
			round := q.pending
			q.pending = nil
			q.mu.Unlock()
			if len(round) > 0 {
				ts.applyEdits(name, round)
			}
			<-q.commit
		case <-ctx.Done():
			q.mu.Lock()
			i := slices.Index(q.pending, p)
			if i >= 0 {
				q.pending = slices.Delete(q.pending, i, i+1)
			}
			q.mu.Unlock()
			if i >= 0 {
				return team.Member{}, fmt.Errorf("%v in team %s: %w", e, name, context.Cause(ctx))
			}
			// Taken into a round being written: it may still be stored,
			// but the caller does not wait for that round's lock.
			return team.Member{}, fmt.Errorf("%v in team %s (may still be stored): %w", e, name, context.Cause(ctx))
		}
	}
}

func (eq *editQueues) queue(name string) *editQueue {
	eq.mu.Lock()
	defer eq.mu.Unlock()
	if eq.queues == nil {
		eq.queues = map[string]*editQueue{}
	}
	q := eq.queues[name]
	if q == nil {
		q = &editQueue{commit: make(chan struct{}, 1)}
		eq.queues[name] = q
	}
	return q
}
