package tmux

import (
	"context"
	"fmt"
	"sync"

	"github.com/troupe-dev/troupe/backend"
)

// Handle is one teammate in a tmux pane.
type Handle struct {
	b       *Backend
	agentID string
	pane    string // set before Spawn returns
	pid     int    // set before Spawn returns
	done    chan struct{}

	unreaped int // polls that saw the pane dead with no status yet; guarded by b.mu

	mu  sync.Mutex
	err error // set before done closes; guarded by mu
}

var _ backend.Handle = (*Handle)(nil)

// AgentID returns the teammate's id.
func (h *Handle) AgentID() string { return h.agentID }

// PaneID returns the tmux pane id, like "%12".
func (h *Handle) PaneID() string { return h.pane }

// PID returns the pid of the pane's process: the teammate itself, since
// the pane command execs it.
func (h *Handle) PID() int { return h.pid }

// Backend returns backend.Tmux.
func (h *Handle) Backend() string { return backend.Tmux }

// Done is closed when the teammate ended: its process exited (noticed
// within about two poll intervals), its pane was closed by anyone, Kill
// or Close.
func (h *Handle) Done() <-chan struct{} { return h.done }

// Err is why the teammate ended, after Done: nil for exit status 0, a
// *backend.ExitError for another status or a signal, backend.ErrKilled
// after Kill or Close, backend.ErrPaneGone when its pane or the server
// disappeared.
func (h *Handle) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// Kill kills the teammate's pane (kill-pane; tmux hangs up its process)
// and ends the handle with backend.ErrKilled. Killing an ended teammate is
// a no-op.
func (h *Handle) Kill(ctx context.Context) error {
	select {
	case <-h.done:
		return nil
	default:
	}
	if err := h.b.killPane(ctx, h.pane); err != nil {
		return fmt.Errorf("kill tmux teammate %s: %w", h.agentID, err)
	}
	h.b.finishPane(h.pane, backend.ErrKilled)
	select {
	case <-h.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("kill tmux teammate %s: %w", h.agentID, context.Cause(ctx))
	}
}

// finish records err and closes done. The backend calls it once, after
// removing the handle from its maps.
func (h *Handle) finish(err error) {
	h.mu.Lock()
	h.err = err
	h.mu.Unlock()
	close(h.done)
}
