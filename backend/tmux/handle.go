package tmux

import (
	"context"
	"fmt"

	"github.com/troupe-dev/troupe/backend"
)

// Handle is one teammate in a tmux pane. Done is closed when its process
// exited (noticed within about two poll intervals), its pane was closed by
// anyone, Kill or Close; Err is then nil for exit status 0, a
// *backend.ExitError for another status or a signal, backend.ErrKilled
// after Kill or Close, backend.ErrPaneGone when its pane or the server
// disappeared.
type Handle struct {
	b        *Backend
	agentID  string
	pane     string // set before Spawn returns
	pid      int    // set before Spawn returns
	window   string // the window of its own it was started in (Spec.Window), else ""
	end      backend.Ending
	unreaped int // polls that saw the pane dead with no status yet; guarded by the lock of b.panes (Judge)
}

var _ backend.Handle = (*Handle)(nil)

// AgentID returns the teammate's id.
func (h *Handle) AgentID() string { return h.agentID }

// PaneID returns the tmux pane id, like "%12".
func (h *Handle) PaneID() string { return h.pane }

// WindowName returns the name of the window of its own the teammate was
// started in (backend.Spec.Window), or "" for a split pane.
func (h *Handle) WindowName() string { return h.window }

var _ backend.Windowed = (*Handle)(nil)

// PID returns the pid of the pane's process: the teammate itself, since
// the pane command execs it.
func (h *Handle) PID() int { return h.pid }

// Done is closed when the teammate has ended.
func (h *Handle) Done() <-chan struct{} { return h.end.Done() }

// Err is why the teammate ended, after Done.
func (h *Handle) Err() error { return h.end.Err() }

// Backend returns backend.Tmux.
func (h *Handle) Backend() string { return backend.Tmux }

// Kill kills the teammate's pane (kill-pane; tmux hangs up its process)
// and ends the handle with backend.ErrKilled. Killing an ended teammate is
// a no-op.
func (h *Handle) Kill(ctx context.Context) error {
	err := h.end.Kill(ctx, func(ctx context.Context) error {
		if err := h.b.killPane(ctx, h.pane); err != nil {
			return err
		}
		h.b.finishPane(h.pane, backend.ErrKilled)
		return nil
	})
	if err != nil {
		return fmt.Errorf("kill tmux teammate %s: %w", h.agentID, err)
	}
	return nil
}
