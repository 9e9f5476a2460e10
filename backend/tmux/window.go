package tmux

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// own records pane as troupe's, in a window of its own called name.
func (b *Backend) own(pane, name string) {
	b.panes.Own(pane)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.windows == nil {
		b.windows = map[string]string{}
	}
	b.windows[pane] = name
}

// split returns troupe's panes in the shared window (those not in a window
// of their own), oldest first: the panes a new split divides.
func (b *Backend) split() []string {
	owned := b.panes.Owned()
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.DeleteFunc(owned, func(p string) bool { _, ok := b.windows[p]; return ok })
}

// ErrNotShown is returned by Hide for a pane that is already out of the
// shared window (hidden, or started in a window of its own).
var ErrNotShown = errors.New("pane is not in the shared window")

// Hide moves the teammate pane p out of the shared window into a window of
// its own named "hidden-<title>" (tmux break-pane), where it goes on
// running unseen; the shared window is tiled again. The pane keeps its id,
// so the team file's hiddenPaneIds can name it. A pane that is the shared
// window's only one (outside tmux) keeps its window, renamed.
func (b *Backend) Hide(ctx context.Context, p, title string) error {
	select {
	case b.layout <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-b.layout }()
	shared := b.split()
	if !slices.Contains(shared, p) {
		if slices.Contains(b.panes.Owned(), p) {
			return fmt.Errorf("hide pane %s: %w", p, ErrNotShown)
		}
		return fmt.Errorf("hide pane %s: not a teammate pane troupe started", p)
	}
	name := "hidden-" + strings.TrimPrefix(windowName(title), "teammate-")
	var err error
	if !b.inside && len(shared) == 1 {
		_, err = b.run(ctx, "rename-window", "-t", p, name)
	} else {
		_, err = b.run(ctx, "break-pane", "-d", "-s", p, "-n", name)
	}
	if err != nil {
		return fmt.Errorf("hide pane %s: %w", p, err)
	}
	b.mu.Lock()
	if b.windows == nil {
		b.windows = map[string]string{}
	}
	b.windows[p] = name
	b.mu.Unlock()
	return b.relayout(ctx, len(shared)-1)
}

// Show brings a pane that Hide moved out (or that was started in a window
// of its own) back into the shared window, split as a new teammate's would
// be (tmux join-pane), and tiles the window again.
func (b *Backend) Show(ctx context.Context, p string) error {
	select {
	case b.layout <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-b.layout }()
	b.mu.Lock()
	_, away := b.windows[p]
	b.mu.Unlock()
	if !away {
		if slices.Contains(b.panes.Owned(), p) {
			return fmt.Errorf("show pane %s: it is in the shared window already", p)
		}
		return fmt.Errorf("show pane %s: not a teammate pane troupe started", p)
	}
	shared := b.split()
	var err error
	switch {
	case len(shared) == 0 && b.inside:
		_, err = b.run(ctx, "join-pane", "-d", "-s", p, "-t", b.leader, "-h", "-l", "70%")
	case len(shared) == 0:
		// Outside tmux with no teammate in the shared window: the pane's
		// own window becomes the shared one, unless another has the name.
		var alone string
		if alone, err = b.sharedWindowTarget(ctx); err == nil {
			if alone == "" {
				_, err = b.run(ctx, "rename-window", "-t", p, b.window)
			} else {
				_, err = b.run(ctx, "join-pane", "-d", "-s", p, "-t", alone)
			}
		}
	default:
		dir := "-h"
		if len(shared)%2 == 1 {
			dir = "-v"
		}
		_, err = b.run(ctx, "join-pane", "-d", "-s", p, "-t", shared[(len(shared)-1)/2], dir)
	}
	if err != nil {
		return fmt.Errorf("show pane %s: %w", p, err)
	}
	b.mu.Lock()
	delete(b.windows, p)
	b.mu.Unlock()
	return b.relayout(ctx, len(shared)+1)
}

// sharedWindowTarget returns a pane of the dedicated session's shared
// window when it exists (a placeholder left by newWindow, say), else "".
func (b *Backend) sharedWindowTarget(ctx context.Context) (string, error) {
	out, err := b.run(ctx, "list-panes", "-s", "-t", "="+b.session, "-F", "#{window_name} #{pane_id}")
	if err != nil {
		return "", fmt.Errorf("list the panes of session %s: %w", b.session, err)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if name, pane, ok := strings.Cut(line, " "); ok && name == b.window {
			return pane, nil
		}
	}
	return "", nil
}

// relayout tiles the shared window again for teammates split panes.
func (b *Backend) relayout(ctx context.Context, teammates int) error {
	var window string
	panes := teammates
	if b.inside {
		out, err := b.run(ctx, "display-message", "-p", "-t", b.leader, "#{window_id}")
		if err != nil {
			return fmt.Errorf("find the leader's window: %w", err)
		}
		window = strings.TrimSpace(out)
		panes++
	} else {
		if teammates == 0 {
			return nil
		}
		window = "=" + b.session + ":" + b.window
	}
	if _, err := b.run(ctx, chain(relayoutArgs(b.inside, window, b.leader, panes)...)...); err != nil {
		return fmt.Errorf("re-tile window %s: %w", window, err)
	}
	return nil
}
