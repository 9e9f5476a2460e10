package swarm

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/team"
)

// Hider is a pane backend that can take a teammate's pane out of the
// shared window and bring it back (backend/tmux): the seed's hidden panes.
type Hider interface {
	Hide(ctx context.Context, pane, title string) error
	Show(ctx context.Context, pane string) error
}

// ErrNoHiding is returned by Hide and Show when the teammate runs where
// nothing can be hidden: in-process, or on a backend without Hider.
var ErrNoHiding = errors.New("only a teammate in a tmux pane can be hidden and shown")

// Hide takes the pane of teammate name out of the lead's window into a
// hidden one, where it goes on working, and records the pane in the team
// file's hiddenPaneIds, which a Claude Code lead reads too.
func (l *Lead) Hide(ctx context.Context, name string) error {
	return l.setHidden(ctx, name, true)
}

// Show brings the hidden pane of teammate name back into the lead's
// window and takes it out of hiddenPaneIds.
func (l *Lead) Show(ctx context.Context, name string) error {
	return l.setHidden(ctx, name, false)
}

func (l *Lead) setHidden(ctx context.Context, name string, hide bool) error {
	pane, err := l.apply(ctx, name, hide)
	if err != nil {
		return err
	}
	_, err = l.cfg.Teams.Update(ctx, l.Team(), func(c *team.Config) error {
		c.HiddenPaneIDs = withPane(c.HiddenPaneIDs, pane, hide)
		return nil
	})
	if err != nil {
		return fmt.Errorf("record the hidden panes of team %s: %w", l.Team(), err)
	}
	return nil
}

// apply hides or shows the pane of teammate name and remembers it; it
// returns the pane.
func (l *Lead) apply(ctx context.Context, name string, hide bool) (string, error) {
	pane, hider, err := l.hidable(name)
	if err != nil {
		return "", err
	}
	if hide {
		err = hider.Hide(ctx, pane, name)
	} else {
		err = hider.Show(ctx, pane)
	}
	if err != nil {
		return "", err
	}
	l.mu.Lock()
	l.hidden[pane] = hide
	l.mu.Unlock()
	return pane, nil
}

// hidable returns the pane of the running teammate name and the backend
// that can hide it.
func (l *Lead) hidable(name string) (string, Hider, error) {
	l.mu.Lock()
	m, ok := l.mates[name]
	l.mu.Unlock()
	if !ok || m.h == nil || ended(m.h) {
		return "", nil, fmt.Errorf("no running teammate named %q in team %s", name, l.Team())
	}
	for _, be := range []backend.Backend{l.cfg.Backend, l.cfg.Fallback} {
		if h, ok := be.(Hider); ok && be.Name() == m.h.Backend() {
			return m.h.PaneID(), h, nil
		}
	}
	return "", nil, fmt.Errorf("teammate %s (%s): %w", name, m.h.Backend(), ErrNoHiding)
}

// canHide reports whether the lead's backends can hide a pane at all.
func (l *Lead) canHide() bool {
	_, a := l.cfg.Backend.(Hider)
	_, b := l.cfg.Fallback.(Hider)
	return a || b
}

// withPane returns ids with pane in (hide) or out, each pane once.
func withPane(ids []string, pane string, hide bool) []string {
	ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == pane })
	if hide {
		ids = append(ids, pane)
	}
	return ids
}

// syncHidden makes the panes of the lead's running teammates match the
// team file's hiddenPaneIds, which `troupe team hide|unhide` (or a Claude
// Code lead sharing the team) may have changed: a pane listed there and
// shown is hidden, a pane hidden and no longer listed is shown. It is
// called when the team file changes, and does nothing when no teammate
// runs in a pane that can be hidden.
func (l *Lead) syncHidden(ctx context.Context) {
	type pane struct{ name, id string }
	var panes []pane
	l.mu.Lock()
	for name, m := range l.mates {
		if m.h != nil && !ended(m.h) && m.h.Backend() != backend.InProcess {
			panes = append(panes, pane{name, m.h.PaneID()})
		}
	}
	l.mu.Unlock()
	if len(panes) == 0 {
		return
	}
	c, err := l.cfg.Teams.Get(ctx, l.Team())
	if err != nil {
		return
	}
	for _, p := range panes {
		want := slices.Contains(c.HiddenPaneIDs, p.id)
		l.mu.Lock()
		is := l.hidden[p.id]
		l.mu.Unlock()
		if want == is {
			continue
		}
		if _, err := l.apply(ctx, p.name, want); err != nil {
			l.cfg.Log.Warn("follow the team file's hiddenPaneIds", "agent", p.name, "hide", want, "err", err)
		}
	}
}
