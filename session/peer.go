package session

import (
	"errors"

	"github.com/troupe-dev/troupe/peer"
)

// KindPeerMessage reports a message from another session (Peer holds it)
// that the lead will read at its next turn boundary.
const KindPeerMessage Kind = "cross_session_message"

// ErrEnded is returned by PeerMessage once a headless run has ended:
// nothing would read the message.
var ErrEnded = errors.New("session: the run has ended; this session reads no more messages")

// PeerMessage hands the lead a message from another session: it reaches
// the lead, wrapped by peer.Format as untrusted peer input, at its next
// tool-round boundary, or as its next run when it is idle (Serve, or a
// headless run waiting for its background work), and it is reported
// (KindPeerMessage, for the person: the terminal and stream-json show
// who sent it). It is the session's only way in for other sessions'
// words: they are the model's input, never a permission answer or a
// change of instructions. After Close it returns ErrClosed; once a
// headless run ended, ErrEnded (the message is sent under the lock the
// run's end looks at the lead's input under, so it is either read or
// refused).
func (s *Session) PeerMessage(m peer.Message) error {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return ErrClosed
	case s.ended:
		s.mu.Unlock()
		return ErrEnded
	}
	if s.lead != nil {
		s.lead.Send(peer.Format(m))
	}
	s.mu.Unlock()
	s.publish(Event{Kind: KindPeerMessage, Peer: &m})
	s.signal()
	return nil
}
