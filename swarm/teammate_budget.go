package swarm

import (
	"context"
	"errors"
	"fmt"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

// A teammate at the end of the session's budget does not stop on its own:
// the lead asks it to shut down, as it asks for any other reason, and it
// approves. Its model cannot answer (no model call starts past the
// budget), so the runtime answers for it: a shutdown request the lead
// marks BudgetSpent, and any shutdown request once the teammate's own
// model has been refused for the session's budget (TeammateConfig.Spent),
// is approved here, its shutdown_approved frame sent to the lead as the
// model's SendMessage would send it.

// stopState is what a teammate knows of the lead's shutdown requests, to
// answer them without its model; guarded by the Teammate's mu.
type stopState struct {
	asked     *shutdownAsk // the lead's latest shutdown request not answered yet
	spent     bool         // no model call can start any more (TeammateConfig.Spent)
	approving bool         // the runtime is sending its approval of asked
}

// shutdownAsk is a shutdown request the teammate has not answered.
type shutdownAsk struct {
	from string
	req  mailbox.ShutdownRequest
}

// shutdownAsked notes the lead's shutdown request f and, when it must be
// answered without a model call, approves it; it reports whether it did.
func (tm *Teammate) shutdownAsked(ctx context.Context, m mailbox.Message, f mailbox.ShutdownRequest) bool {
	tm.mu.Lock()
	tm.stop.asked = &shutdownAsk{from: m.From, req: f}
	now := f.BudgetSpent || tm.stop.spent
	tm.mu.Unlock()
	if !now {
		return false
	}
	tm.approveAsked(ctx)
	return true
}

// approveAsked approves the pending shutdown request, if any: the lead
// gets shutdown_approved, the current turn ends, and Run returns.
func (tm *Teammate) approveAsked(ctx context.Context) {
	tm.mu.Lock()
	a := tm.stop.asked
	tm.stop.asked = nil
	if a == nil || tm.shutdown != "" || tm.stop.approving {
		tm.mu.Unlock()
		return
	}
	tm.stop.approving = true
	tm.mu.Unlock()
	// Sent before the teammate ends: a lead that sees it gone finds its
	// approval already in its inbox, never a teammate that just exited.
	text, err := mailbox.Encode(mailbox.ShutdownApproved{RequestID: a.req.RequestID, From: tm.cfg.Name,
		Timestamp: tm.cfg.Now().UTC().Format(mailbox.TimeLayout), PaneID: tm.cfg.PaneID, BackendType: tm.cfg.Backend})
	if err == nil {
		_, err = tm.cfg.Mail.Send(ctx, tm.cfg.Team, team.LeadName, mailbox.Message{From: tm.cfg.Name, Color: tm.cfg.Color, Text: text})
	}
	if err != nil && ctx.Err() == nil {
		tm.cfg.Log.Warn("send shutdown approval", "agent", tm.cfg.Name, "err", err)
	}
	why := "its model cannot answer"
	if a.req.Reason != "" {
		why = a.req.Reason
	}
	tm.event(EventShutdown, fmt.Sprintf("approved shutdown %s without a model call (%s)", a.req.RequestID, firstLine(why, 160)))
	tm.mu.Lock()
	tm.shutdown = a.req.RequestID
	ag := tm.ag
	tm.mu.Unlock()
	if ag != nil {
		ag.Interrupt()
	}
	tm.kick()
}

// errShuttingDown ends the wait for the next prompt of a teammate whose
// shutdown was approved while it was idle.
var errShuttingDown = errors.New("swarm: shutdown approved")

// ended is Run's end after next failed with err: an approved shutdown
// is a clean end.
func (tm *Teammate) ended(ctx context.Context, err error) error {
	if errors.Is(err, errShuttingDown) {
		tm.leave(ctx)
		return nil
	}
	return err
}

func (tm *Teammate) kick() {
	select {
	case tm.wake <- struct{}{}:
	default:
	}
}

// awaitShutdown ends a teammate whose run the session's budget stopped:
// the lead learns why from its idle notification, and the teammate waits,
// idle and without calling its model again, for the lead's shutdown
// request, approves it and returns nil (or ctx's cause).
func (tm *Teammate) awaitShutdown(ctx context.Context, res agent.Result, runErr error, turn turnState) error {
	tm.mu.Lock()
	tm.stop.spent = true
	tm.mu.Unlock()
	runErr = fmt.Errorf("%w; it has stopped working and waits for your shutdown request", runErr)
	tm.idle(ctx, res, runErr, turn)
	tm.goIdle(ctx)
	tm.event(EventWarning, "stopped: "+runErr.Error())
	tm.approveAsked(ctx) // a request that came during the run
	for {
		tm.mu.Lock()
		done := tm.shutdown != ""
		tm.mu.Unlock()
		if done {
			tm.leave(ctx)
			return nil
		}
		select {
		case <-tm.wake:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}
