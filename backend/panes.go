package backend

import (
	"context"
	"slices"
	"sync"
)

// Panes is the bookkeeping of a pane backend (tmux, iTerm2), H being its
// handle type: the agent ids that run or are starting, the panes troupe
// created and has not closed (oldest first), the launched teammates by
// pane, the Spawns under way, and whether the backend is closed. The zero
// value is ready to use; it is safe for concurrent use. It runs nothing:
// the backend creates and closes the panes.
type Panes[H any] struct {
	mu       sync.Mutex
	closed   bool
	byID     map[string]*H          // live or starting teammates
	handles  map[string]launched[H] // launched teammates by pane
	owned    []string
	inflight sync.WaitGroup // Spawns between Reserve and Launched
}

type launched[H any] struct {
	h       *H
	agentID string
}

// Reserve claims agentID for h at the start of a Spawn. It fails with
// ErrClosed after Close and ErrRunning while agentID runs or starts. After
// a nil error the Spawn must end with Launched.
func (p *Panes[H]) Reserve(agentID string, h *H) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return ErrClosed
	case p.byID[agentID] != nil:
		return ErrRunning
	}
	if p.byID == nil {
		p.byID = map[string]*H{}
	}
	p.byID[agentID] = h
	p.inflight.Add(1)
	return nil
}

// Launched ends a Spawn begun by Reserve. With err nil, h is the teammate
// of pane from now on, unless Close came meanwhile: then it returns
// ErrClosed, and the caller, like for any error it returns, closes the
// pane. With an error, agentID is free again and the error is returned.
func (p *Panes[H]) Launched(agentID, pane string, h *H, err error) error {
	defer p.inflight.Done()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil && p.closed {
		err = ErrClosed
	}
	if err != nil {
		if p.byID[agentID] == h {
			delete(p.byID, agentID)
		}
		return err
	}
	if p.handles == nil {
		p.handles = map[string]launched[H]{}
	}
	p.handles[pane] = launched[H]{h, agentID}
	return nil
}

// Own records pane as created by troupe, the newest.
func (p *Panes[H]) Own(pane string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.owned = append(p.owned, pane)
}

// Disown drops pane from the panes troupe created and reports whether it
// was one. A backend disowns a pane before closing it, so that its
// supervisor never takes troupe's own close for someone else's, and Owns
// it again when the close fails.
func (p *Panes[H]) Disown(pane string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := slices.Index(p.owned, pane)
	if i >= 0 {
		p.owned = slices.Delete(p.owned, i, i+1)
	}
	return i >= 0
}

// Owned returns the panes troupe created and has not closed, oldest
// first.
func (p *Panes[H]) Owned() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.owned)
}

// Finish removes the teammate of pane and frees its agent id; it returns
// the teammate (to Finish its Ending), or nil when pane has none or it
// was finished already.
func (p *Panes[H]) Finish(pane string) *H {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, ok := p.handles[pane]
	if !ok {
		return nil
	}
	delete(p.handles, pane)
	if p.byID[l.agentID] == l.h {
		delete(p.byID, l.agentID)
	}
	return l.h
}

// Watched returns the panes of launched teammates: what a supervisor's
// listing, started after this call, may judge.
func (p *Panes[H]) Watched() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	panes := make([]string, 0, len(p.handles))
	for pane := range p.handles {
		panes = append(panes, pane)
	}
	return panes
}

// Judge calls judge, under the lock, for each of panes whose teammate is
// still launched and whose pane troupe still owns (not being closed by
// troupe itself). judge must not call other methods of p.
func (p *Panes[H]) Judge(panes []string, judge func(pane string, h *H)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pane := range panes {
		if l, ok := p.handles[pane]; ok && slices.Contains(p.owned, pane) {
			judge(pane, l.h)
		}
	}
}

// Close makes Reserve fail with ErrClosed from now on, waits for the
// Spawns under way (or ctx, whose cause it then returns) and returns the
// panes troupe owns.
func (p *Panes[H]) Close(ctx context.Context) ([]string, error) {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	spawned := make(chan struct{})
	go func() { p.inflight.Wait(); close(spawned) }()
	select {
	case <-spawned:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	return p.Owned(), nil
}
