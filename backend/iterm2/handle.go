package iterm2

import (
	"context"
	"fmt"
	"sync"

	"github.com/troupe-dev/troupe/backend"
)

// Handle is one teammate in an iTerm2 session.
type Handle struct {
	b       *Backend
	agentID string
	session string // set before Spawn returns
	done    chan struct{}

	mu  sync.Mutex
	err error // set before done closes; guarded by mu
}

var _ backend.Handle = (*Handle)(nil)

// AgentID returns the teammate's id.
func (h *Handle) AgentID() string { return h.agentID }

// PaneID returns the iTerm2 session id.
func (h *Handle) PaneID() string { return h.session }

// Backend returns backend.ITerm2.
func (h *Handle) Backend() string { return backend.ITerm2 }

// Done is closed when the teammate ended: its session is no longer listed
// (noticed within about a poll interval), Kill or Close.
func (h *Handle) Done() <-chan struct{} { return h.done }

// Err is why the teammate ended, after Done: backend.ErrKilled after Kill
// or Close, backend.ErrPaneGone otherwise (iTerm2 does not report exit
// statuses, so a clean exit looks the same as a closed session).
func (h *Handle) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// Kill closes the teammate's session (it2 session close -f) and ends the
// handle with backend.ErrKilled. Killing an ended teammate is a no-op.
func (h *Handle) Kill(ctx context.Context) error {
	select {
	case <-h.done:
		return nil
	default:
	}
	if err := h.b.closeSession(ctx, h.session); err != nil {
		return fmt.Errorf("kill iTerm2 teammate %s: %w", h.agentID, err)
	}
	h.b.finishSession(h.session, backend.ErrKilled)
	select {
	case <-h.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("kill iTerm2 teammate %s: %w", h.agentID, context.Cause(ctx))
	}
}

func (h *Handle) finish(err error) {
	h.mu.Lock()
	h.err = err
	h.mu.Unlock()
	close(h.done)
}
