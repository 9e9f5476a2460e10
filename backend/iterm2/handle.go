package iterm2

import (
	"context"
	"fmt"

	"github.com/troupe-dev/troupe/backend"
)

// Handle is one teammate in an iTerm2 session. Done is closed when its
// session is no longer listed (noticed within about a poll interval), Kill
// or Close; Err is then backend.ErrKilled after Kill or Close and
// backend.ErrPaneGone otherwise (iTerm2 reports no exit status, so a clean
// exit looks like a closed session).
type Handle struct {
	b       *Backend
	agentID string
	session string // set before Spawn returns
	end     backend.Ending
}

var _ backend.Handle = (*Handle)(nil)

// AgentID returns the teammate's id.
func (h *Handle) AgentID() string { return h.agentID }

// PaneID returns the iTerm2 session id.
func (h *Handle) PaneID() string { return h.session }

// Done is closed when the teammate has ended.
func (h *Handle) Done() <-chan struct{} { return h.end.Done() }

// Err is why the teammate ended, after Done.
func (h *Handle) Err() error { return h.end.Err() }

// Backend returns backend.ITerm2.
func (h *Handle) Backend() string { return backend.ITerm2 }

// Kill closes the teammate's session (it2 session close -f) and ends the
// handle with backend.ErrKilled. Killing an ended teammate is a no-op.
func (h *Handle) Kill(ctx context.Context) error {
	err := h.end.Kill(ctx, func(ctx context.Context) error {
		if err := h.b.closeSession(ctx, h.session); err != nil {
			return err
		}
		h.b.finishSession(h.session, backend.ErrKilled)
		return nil
	})
	if err != nil {
		return fmt.Errorf("kill iTerm2 teammate %s: %w", h.agentID, err)
	}
	return nil
}
