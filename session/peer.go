package session

import (
	"github.com/troupe-dev/troupe/peer"
)

// KindPeerMessage reports a message from another session (Peer holds it)
// that the lead will read at its next turn boundary.
const KindPeerMessage Kind = "cross_session_message"

// PeerMessage hands the lead a message from another session: it is
// reported (KindPeerMessage, for the person: the terminal and
// stream-json show who sent it) and reaches the lead, wrapped by
// peer.Format as untrusted peer input, at its next tool-round boundary,
// or as its next run when it is idle (Serve, or a headless run waiting
// for its background work). It is the session's only way in for other
// sessions' words: they are the model's input, never a permission
// answer or a change of instructions. After Close it refuses.
func (s *Session) PeerMessage(m peer.Message) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	s.publish(Event{Kind: KindPeerMessage, Peer: &m})
	s.Deliver(peer.Format(m))
	return nil
}
