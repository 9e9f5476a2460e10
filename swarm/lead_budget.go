package swarm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

// BudgetSpent asks every teammate the lead started that still runs to
// shut down because the session's budget is spent (why names the limit
// reached): a shutdown request through the mailbox, marked BudgetSpent,
// which troupe teammates approve without a model call and other ones
// (Claude Code's) answer as they answer any; one that does not answer is
// killed after ShutdownAnswerTimeout, as always. The lead's model is told
// why (a system reminder it reads with its next input), and the timeline
// shows each request. Only the first call does anything; it returns the
// names asked and the failed sends.
func (l *Lead) BudgetSpent(ctx context.Context, why string) ([]string, error) {
	teamName := l.Team()
	l.mu.Lock()
	if l.spentWhy != "" || teamName == "" || strings.HasPrefix(teamName, "\x00") {
		l.mu.Unlock()
		return nil, nil
	}
	l.spentWhy = why
	var names []string
	for name, m := range l.mates {
		if m.h == nil || !ended(m.h) {
			names = append(names, name)
		}
	}
	l.mu.Unlock()
	slices.Sort(names)
	var errs []error
	var asked []string
	for _, name := range names {
		now := l.cfg.Now()
		text, err := mailbox.Encode(mailbox.ShutdownRequest{RequestID: fmt.Sprintf("shutdown-%d@%s", now.UnixMilli(), name),
			From: team.LeadName, Reason: why, Timestamp: now.UTC().Format(mailbox.TimeLayout), BudgetSpent: true})
		if err == nil {
			_, err = l.Mail().Send(ctx, teamName, name, mailbox.Message{From: team.LeadName, Text: text, Summary: "shutdown: the session's budget is spent"})
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("ask %s to shut down: %w", name, err))
			l.event(name, EventWarning, fmt.Sprintf("could not ask %s to shut down: %v", name, err))
			continue
		}
		asked = append(asked, name)
		l.event(name, EventShutdown, fmt.Sprintf("asked %s to shut down: %s", name, why))
	}
	note := "No teammate was running."
	if len(asked) > 0 {
		note = "Your teammates " + strings.Join(asked, ", ") + " were asked to shut down and approve without a model call."
	}
	l.deliver(fmt.Sprintf("<system-reminder>\nThe session's budget is spent (%s): no new model call starts and the run ends. %s\n</system-reminder>", why, note))
	return asked, errors.Join(errs...)
}

// Led returns the names of every team the lead created, the deleted ones
// too, in order: what its teammates spent is the session's, also after
// the team is gone.
func (l *Lead) Led() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.led)
}

// Settled waits until every teammate the lead started has ended and
// every end has been handled (an approved shutdown's member removed and
// tasks released, a death reported; no approval left unread in the lead's
// inbox), or until ctx ends (its cause). A headless lead at the end of
// its budget waits here before it ends the team, so that its teammates
// leave as asked instead of being killed.
func (l *Lead) Settled(ctx context.Context) error {
	teamName := l.Team()
	for {
		l.mu.Lock()
		busy := l.shutting > 0 || l.ending > 0
		for _, m := range l.mates {
			busy = busy || m.h != nil && !ended(m.h)
		}
		l.mu.Unlock()
		if !busy && teamName != "" && !strings.HasPrefix(teamName, "\x00") {
			// An approval written just before its teammate ended may not
			// have reached the pump yet.
			msgs, err := l.cfg.Mail.Read(ctx, teamName, team.LeadName, true)
			if err != nil && ctx.Err() != nil {
				return context.Cause(ctx)
			}
			busy = slices.ContainsFunc(msgs, func(m mailbox.Message) bool {
				return mailbox.ProtocolKind(m.Text) == mailbox.KindShutdownApproved
			})
		}
		if !busy {
			return nil
		}
		select {
		case <-l.changed:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}
