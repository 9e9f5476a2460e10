package mailbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Store implementations return these (wrapped), never
// backend errors.
var (
	ErrUnknownRecipient = errors.New("mailbox: unknown recipient")
	ErrNoTeam           = errors.New("mailbox: no such team")
	ErrCorrupt          = errors.New("mailbox: corrupt inbox")
	ErrClosed           = errors.New("mailbox: store closed")
	// ErrOutcomeUnknown says a send failed at a point where the store
	// cannot tell whether the message reached the inbox (another writer
	// took it and has not finished). Every other send error means the
	// message was not delivered and will not be.
	ErrOutcomeUnknown = errors.New("mailbox: delivery outcome unknown")
)

// Store delivers and keeps messages. See the package doc for the delivery
// semantics every implementation provides.
type Store interface {
	// Send stores msg in the inbox of to (a member name, or Broadcast) in
	// team, after Prepare. It returns one Delivery per recipient. Errors:
	// ErrNoTeam, *UnknownRecipientError, ErrOutcomeUnknown, or a wrapped
	// I/O error. On error the recipients not listed in the returned
	// deliveries did not get the message (for a broadcast, the deliveries
	// made before the failure are returned with the error), except after
	// ErrOutcomeUnknown, when the failing recipient may still get it.
	Send(ctx context.Context, team, to string, msg Message) ([]Delivery, error)
	// Read returns the messages in agent's inbox, oldest first. With
	// unreadOnly, read messages are left out. A corrupt inbox is moved
	// aside and reported as a *CorruptError; later reads and sends work on
	// a fresh inbox.
	Read(ctx context.Context, team, agent string, unreadOnly bool) ([]Message, error)
	// MarkRead marks the messages with the given ids read and returns how
	// many it changed; ids that are absent (pruned, or removed by another
	// reader) are ignored.
	MarkRead(ctx context.Context, team, agent string, ids []string) (int, error)
	// Watch returns a channel that receives a coalesced kick soon after
	// agent's inbox changes. The channel is closed when ctx is done or the
	// store is closed. A kick may be spurious; the reader re-reads.
	Watch(ctx context.Context, team, agent string) (<-chan struct{}, error)
}

// Delivery records one stored copy of a message.
type Delivery struct {
	To string // recipient name
	ID string // msg_id of the copy in that inbox
}

// UnknownRecipientError is returned when a message is addressed to a name
// that is not on the team's roster. It matches ErrUnknownRecipient.
type UnknownRecipientError struct {
	Team  string
	Name  string
	Valid []string
}

func (e *UnknownRecipientError) Error() string {
	hint := ""
	for _, v := range e.Valid {
		if strings.EqualFold(v, e.Name) {
			hint = fmt.Sprintf(" (did you mean %q?)", v)
		}
	}
	return fmt.Sprintf("no member %q in team %s%s; valid recipients: %s, or %q for everyone", e.Name, e.Team, hint, strings.Join(e.Valid, ", "), Broadcast)
}

// Unwrap returns ErrUnknownRecipient.
func (e *UnknownRecipientError) Unwrap() error { return ErrUnknownRecipient }

// CorruptError reports an inbox that could not be parsed. The bad content
// was moved aside to MovedTo (a store-specific location) and nothing in it
// was deleted. It matches ErrCorrupt.
type CorruptError struct {
	Team, Agent string
	MovedTo     string
	Err         error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("inbox of %s in team %s was corrupt (%v); moved aside to %s, new messages go to a fresh inbox", e.Agent, e.Team, e.Err, e.MovedTo)
}

// Unwrap returns ErrCorrupt and the parse error.
func (e *CorruptError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }

// leadName is team.LeadName: mailbox sits beside team, not above it.
const leadName = "team-lead"

// Recipients resolves to against a roster: the named member, or for
// Broadcast every member but from, in roster order with the lead last.
// Stores deliver in this order, so when the lead's copy of a broadcast
// arrives every other copy is already stored: the lead can tell a
// broadcast from a direct message by looking at another member's inbox.
// It returns *UnknownRecipientError when to is not on the roster.
func Recipients(teamName string, roster []string, from, to string) ([]string, error) {
	if to == Broadcast {
		var out []string
		lead := false
		for _, n := range roster {
			switch {
			case n == from:
			case n == leadName:
				lead = true
			default:
				out = append(out, n)
			}
		}
		if lead {
			out = append(out, leadName)
		}
		return out, nil
	}
	for _, n := range roster {
		if n == to {
			return []string{to}, nil
		}
	}
	return nil, &UnknownRecipientError{Team: teamName, Name: to, Valid: append([]string(nil), roster...)}
}

func asType(err error, target any) bool { return errors.As(err, target) }
