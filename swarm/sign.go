package swarm

import (
	"context"
	"errors"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

// SigningMail is the lead's view of a mailbox store: every message it
// sends as the lead is signed (docs/protocol.md section 4.3), so that pane
// teammates started with --lead-verify-key can tell the lead's frames
// from forgeries. Messages from anyone else pass through unchanged. A
// broadcast is sent to each recipient on its own, each signed.
type SigningMail struct {
	mailbox.Store
	Teams  team.Store
	Signer *mailbox.LeadSigner
	Now    func() time.Time
}

// Send implements mailbox.Store.
func (s SigningMail) Send(ctx context.Context, teamName, to string, msg mailbox.Message) ([]mailbox.Delivery, error) {
	if msg.From != team.LeadName || s.Signer == nil {
		return s.Store.Send(ctx, teamName, to, msg)
	}
	if to != mailbox.Broadcast {
		return s.sendOne(ctx, teamName, to, msg)
	}
	cfg, err := s.Teams.Get(ctx, teamName)
	if err != nil {
		return nil, err
	}
	names, err := mailbox.Recipients(teamName, cfg.Names(), msg.From, to)
	if err != nil {
		return nil, err
	}
	var all []mailbox.Delivery
	var errs []error
	for _, name := range names {
		d, err := s.sendOne(ctx, teamName, name, msg)
		all = append(all, d...)
		errs = append(errs, err)
	}
	return all, errors.Join(errs...)
}

func (s SigningMail) sendOne(ctx context.Context, teamName, to string, msg mailbox.Message) ([]mailbox.Delivery, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	msg.ID = "" // one id per recipient, signed with it
	m, err := mailbox.Prepare(msg, now())
	if err != nil {
		return nil, err
	}
	if m, err = s.Signer.Sign(m); err != nil {
		return nil, err
	}
	return s.Store.Send(ctx, teamName, to, m)
}
