package swarm

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/internal/inert"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

// pump reads the lead's unread messages and dispatches them.
func (l *Lead) pump(ctx context.Context, teamName string) error {
	// Busy while mail moves from the inbox to the lead's model.
	l.mu.Lock()
	l.ending++
	l.mu.Unlock()
	defer l.endWork()
	msgs, err := l.cfg.Mail.Read(ctx, teamName, team.LeadName, true)
	if err != nil {
		var ce *mailbox.CorruptError
		if !errors.As(err, &ce) {
			return err
		}
		l.cfg.Log.Warn("the lead's inbox was corrupt and moved aside", "err", err)
	}
	if len(msgs) == 0 {
		return nil
	}
	ids := make([]string, len(msgs))
	l.mu.Lock()
	for i, m := range msgs {
		ids[i] = m.ID
		if mailbox.ProtocolKind(m.Text) == mailbox.KindShutdownApproved {
			l.approved[m.From] = true // before it leaves the inbox: supervise looks at both
		}
	}
	l.mu.Unlock()
	if _, err := l.cfg.Mail.MarkRead(ctx, teamName, team.LeadName, ids); err != nil {
		return err
	}
	// What the senders took from their inboxes before they wrote this
	// counts before what they wrote (lead_owed.go).
	looked := map[string]bool{}
	for _, m := range msgs {
		if !looked[m.From] {
			looked[m.From] = true
			if _, err := l.look(ctx, teamName, m.From); err != nil {
				l.cfg.Log.Warn("look at a teammate's inbox", "agent", m.From, "err", err)
			}
		}
	}
	var plain []mailbox.Message
	for _, m := range msgs {
		f, err := mailbox.Decode(m.Text)
		if err != nil {
			f = mailbox.Text(m.Text)
		}
		_, isIdle := f.(mailbox.IdleNotification)
		l.heard(m.From, isIdle)
		l.mateIdle(m.From, isIdle)
		switch f := f.(type) {
		case mailbox.IdleNotification:
			l.idle(m, f)
		case mailbox.ShutdownApproved:
			l.answered(m.From)
			l.mu.Lock()
			l.ending++ // counted before the mail is marked read: never invisible
			l.shutting++
			l.mu.Unlock()
			l.wg.Go(func() { l.shutdownApproved(teamName, m, f) })
		case mailbox.ShutdownRejected:
			l.answered(m.From)
			l.event(m.From, EventShutdown, fmt.Sprintf("%s rejected shutdown: %s", m.From, f.Reason))
			plain = append(plain, m)
		case mailbox.PermissionRequest:
			if f.AgentID != m.From {
				l.event(m.From, EventWarning, fmt.Sprintf("dropped a permission request naming %q sent by %q", f.AgentID, m.From))
				continue
			}
			if strings.HasPrefix(f.RequestID, mirrorPrefix) && l.inProcess(m.From) {
				// The mirror of a question its teammate asks in process
				// (Teammate.AskMirrored): asked there, not again here.
				continue
			}
			l.wg.Go(func() { l.answerMail(ctx, teamName, m, f) })
		case mailbox.PlanApprovalRequest:
			l.mu.Lock()
			l.plans[f.RequestID] = mailbox.PlanDigest(f.PlanContent)
			l.mu.Unlock()
			l.event(m.From, EventPlan, fmt.Sprintf("%s asks the lead to approve its plan (%d bytes)", m.From, len(f.PlanContent)))
			if l.cfg.AnswerPlan != nil {
				l.wg.Go(func() { l.answerPlan(ctx, teamName, m, f) })
				continue
			}
			plain = append(plain, m)
		default:
			to := "lead"
			if l.broadcast(ctx, teamName, m) {
				to = "everyone"
			}
			body := m.Text
			if t, ok := f.(mailbox.Text); ok {
				body = string(t)
			}
			l.eventBody(m.From, EventMessage, fmt.Sprintf("%s → %s: %s", m.From, to, firstLine(messageText(m, f), 100)), body)
			plain = append(plain, m)
		}
	}
	if len(plain) > 0 {
		l.deliver(forLead(plain))
	}
	return nil
}

func messageText(m mailbox.Message, f mailbox.Frame) string {
	if m.Summary != "" {
		return m.Summary
	}
	if t, ok := f.(mailbox.Text); ok {
		return string(t)
	}
	return m.Text
}

// idle records an idle notification for the digest.
func (l *Lead) idle(m mailbox.Message, f mailbox.IdleNotification) {
	l.mu.Lock()
	if l.dead[f.From] {
		// Sent before it died, read after: its death notice went out, and
		// a dead teammate is not idle. Only what it reported is passed on.
		l.mu.Unlock()
		if report := lastReport(f); report != "" {
			l.deliver(fmt.Sprintf("<system-reminder>\nTeammate %s, which died, had sent this before it died.%s\n</system-reminder>", f.From, report))
		}
		l.event(m.From, EventWarning, m.From+"'s idle notice came after its death: not reported as idle")
		return
	}
	// One entry per teammate: the latest replaces an earlier one, but a
	// result or completed task in the earlier one is kept.
	kept := false
	for i, d := range l.digest {
		if d.From == f.From {
			if f.Result == "" {
				f.Result = d.Result
			}
			if f.CompletedTaskID == "" {
				f.CompletedTaskID, f.CompletedStatus = d.CompletedTaskID, d.CompletedStatus
			}
			l.digest[i] = f
			kept = true
		}
	}
	if !kept {
		l.digest = append(l.digest, f)
	}
	l.mu.Unlock()
	what := "is idle"
	if f.IdleReason != "" && f.IdleReason != mailbox.IdleAvailable {
		what += " (" + f.IdleReason + ")"
	}
	what += outcomeNote(f)
	l.event(m.From, EventIdle, m.From+" "+what)
}

// TakeDigest returns the pending idle notifications as one short message
// for the lead's model, and clears them; "" when there are none.
func (l *Lead) TakeDigest() string {
	l.mu.Lock()
	d := l.digest
	l.digest = nil
	l.mu.Unlock()
	if len(d) == 0 {
		return ""
	}
	l.event(team.LeadName, EventDigest, fmt.Sprintf("idle notifications of %d teammate(s) reach the lead as one digest", len(d)))
	// Grouped by how their runs ended, the ones that need the lead
	// first: failed, blocked, resolved, then the rest; by name within.
	sort.SliceStable(d, func(i, j int) bool {
		if gi, gj := statusRank(d[i].CompletedStatus), statusRank(d[j].CompletedStatus); gi != gj {
			return gi < gj
		}
		return d[i].From < d[j].From
	})
	var b strings.Builder
	fmt.Fprintf(&b, "<teammate-idle-digest count=\"%d\">\n", len(d))
	// Headings only when there is more than one group: a digest of idle
	// teammates alone reads as before.
	group := statusRank(d[0].CompletedStatus)
	if statusRank(d[len(d)-1].CompletedStatus) == group {
		group = -2
	} else {
		group = -1
	}
	for _, n := range d {
		if g := statusRank(n.CompletedStatus); group != -2 && g != group {
			group = g
			fmt.Fprintf(&b, "%s:\n", statusHeading[g])
		}
		// What a teammate wrote (its reasons, last message and report)
		// cannot close the digest or open another block.
		fmt.Fprintf(&b, "- %s is idle", n.From)
		if n.IdleReason != "" && n.IdleReason != mailbox.IdleAvailable {
			fmt.Fprintf(&b, " (%s", inert.Tags(n.IdleReason))
			if n.FailureReason != "" && n.CompletedStatus != mailbox.CompletedBlocked {
				fmt.Fprintf(&b, ": %s", inert.Tags(n.FailureReason))
			}
			b.WriteString(")")
		}
		switch {
		case n.CompletedStatus == mailbox.CompletedResolved && n.CompletedTaskID != "":
			fmt.Fprintf(&b, "; completed task #%s", inert.Tags(n.CompletedTaskID))
		case n.CompletedStatus == mailbox.CompletedBlocked:
			b.WriteString("; blocked")
			if n.CompletedTaskID != "" {
				fmt.Fprintf(&b, " on task #%s", inert.Tags(n.CompletedTaskID))
			}
			if n.FailureReason != "" {
				fmt.Fprintf(&b, ": %s", inert.Tags(n.FailureReason))
			}
		case n.CompletedStatus == mailbox.CompletedFailed && n.CompletedTaskID != "":
			fmt.Fprintf(&b, "; task #%s failed", inert.Tags(n.CompletedTaskID))
		case n.CompletedTaskID != "":
			fmt.Fprintf(&b, "; completed task #%s (%s)", inert.Tags(n.CompletedTaskID), inert.Tags(n.CompletedStatus))
		}
		if n.Summary != "" {
			fmt.Fprintf(&b, "; last message: %s", inert.Tags(n.Summary))
		}
		if n.Result != "" {
			fmt.Fprintf(&b, "\n  report: %s", strings.ReplaceAll(inert.Tags(n.Result), "\n", "\n  "))
		}
		if l.cfg.IdleNote != nil {
			if note := l.cfg.IdleNote(n.From); note != "" {
				fmt.Fprintf(&b, "\n  %s", strings.ReplaceAll(inert.Tags(note), "\n", "\n  "))
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("</teammate-idle-digest>\nIdle teammates wait for a message or a task; this is a status update, not user input.")
	return b.String()
}

// outcomeNote words an idle notification's outcome for a timeline line:
// ", completed task #3", ", blocked on task #4: why", ", failed: why".
func outcomeNote(n mailbox.IdleNotification) string {
	task := ""
	if n.CompletedTaskID != "" {
		task = " task #" + n.CompletedTaskID
	}
	switch n.CompletedStatus {
	case "":
		return ""
	case mailbox.CompletedResolved:
		return ", completed" + task
	case mailbox.CompletedBlocked:
		return ", blocked" + strings.Replace(task, " task", " on task", 1) + reasonNote(n.FailureReason)
	}
	return ", " + n.CompletedStatus + task + reasonNote(n.FailureReason)
}

func reasonNote(why string) string {
	if why == "" {
		return ""
	}
	return ": " + why
}

// statusHeading names the digest's groups, by statusRank.
var statusHeading = []string{"failed", "blocked", "resolved", "idle"}

// statusRank orders an idle notification's completedStatus for the digest.
func statusRank(status string) int {
	switch status {
	case mailbox.CompletedFailed:
		return 0
	case mailbox.CompletedBlocked:
		return 1
	case mailbox.CompletedResolved:
		return 2
	}
	return 3
}

// PlanDigest returns the digest of a plan approval request the lead got.
func (l *Lead) PlanDigest(requestID string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d, ok := l.plans[requestID]
	return d, ok
}

// shutdownApproved ends a teammate that approved its shutdown: waits for
// it to exit (killing it after ShutdownTimeout), closes its pane, removes
// it from the team and releases its tasks.
func (l *Lead) shutdownApproved(teamName string, msg mailbox.Message, f mailbox.ShutdownApproved) {
	name := msg.From
	l.event(name, EventShutdown, name+" approved shutdown")
	l.mu.Lock()
	m := l.mates[name]
	if m != nil {
		m.expected = true
	}
	l.mu.Unlock()
	defer l.endWork()
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.ShutdownTimeout+30*time.Second)
	defer cancel()
	if m != nil && m.h != nil {
		t := time.NewTimer(l.cfg.ShutdownTimeout)
		select {
		case <-m.h.Done():
		case <-t.C:
			why := fmt.Sprintf("%s did not exit within %s after approving shutdown; killing it", name, l.cfg.ShutdownTimeout)
			l.event(name, EventWarning, why)
			l.problem(why)
		}
		t.Stop()
		if err := m.h.Kill(ctx); err != nil {
			l.cfg.Log.Warn("kill a teammate after shutdown", "agent", name, "err", err)
		}
	}
	// One handler at a time from here to the last-one-out check, so that
	// two teammates shutting down together cannot each see the other
	// still in the team file.
	l.shutMu.Lock()
	defer l.shutMu.Unlock()
	released := l.removeMate(ctx, teamName, name)
	l.mu.Lock()
	for i, d := range l.digest {
		if d.From == name && d.Result == "" && d.CompletedTaskID == "" {
			l.digest = append(l.digest[:i], l.digest[i+1:]...)
			break
		}
	}
	// The name is free before the exit is reported: whoever hears of it
	// may spawn a teammate of the same name at once.
	delete(l.approved, name)
	l.mu.Unlock()
	l.event(name, EventExit, name+" has shut down"+releasedNote(released))
	// The last one out tells the lead the team is empty: no other
	// shutdown in progress, and no teammate left in the team file.
	cfg, cerr := l.cfg.Teams.Get(ctx, teamName)
	l.mu.Lock()
	l.shutting--
	last := l.shutting == 0 && cerr == nil
	for _, mm := range cfg.Members {
		if !mm.IsLead() {
			last = false
		}
	}
	l.mu.Unlock()
	switch {
	case len(released) > 0:
		l.deliver(fmt.Sprintf("<system-reminder>\n%s has shut down.%s\n</system-reminder>", name, releasedNote(released)))
	case last:
		l.deliver(fmt.Sprintf("<system-reminder>\n%s has shut down. All teammates have shut down; the team is empty.\n</system-reminder>", name))
	}
}

// broadcast reports whether m, in the lead's inbox, is the lead's copy of
// a message its sender sent to everyone: another member's inbox holds the
// same message (sender, time and text). It looks at one other member's
// inbox; a member that removes what it takes (Claude Code's, which do not
// broadcast) may make a broadcast look direct, never the other way.
func (l *Lead) broadcast(ctx context.Context, teamName string, m mailbox.Message) bool {
	cfg, err := l.cfg.Teams.Get(ctx, teamName)
	if err != nil {
		return false
	}
	for _, other := range cfg.Members {
		if other.IsLead() || other.Name == m.From {
			continue
		}
		msgs, err := l.cfg.Mail.Read(ctx, teamName, other.Name, false)
		if err != nil {
			return false
		}
		for _, o := range msgs {
			if o.From == m.From && o.Timestamp.Equal(m.Timestamp) && o.Text == m.Text {
				return true
			}
		}
		return false
	}
	return false
}

// answerPlan asks LeadConfig.AnswerPlan about a teammate's plan and sends
// the teammate the answer, as the lead's SendMessage would: an approval
// carries the plan's digest and never widens the teammate's mode; a
// rejection always carries feedback.
func (l *Lead) answerPlan(ctx context.Context, teamName string, m mailbox.Message, f mailbox.PlanApprovalRequest) {
	ans, err := l.cfg.AnswerPlan(ctx, PlanAsk{Worker: m.From, Color: m.Color, RequestID: f.RequestID, Plan: f.PlanContent})
	if err != nil {
		if ctx.Err() == nil {
			l.event(m.From, EventWarning, "the plan of "+m.From+" got no answer: "+err.Error())
		}
		return
	}
	resp := mailbox.PlanApprovalResponse{RequestID: f.RequestID, Approved: ans.Approve, Feedback: strings.TrimSpace(ans.Feedback), Timestamp: l.cfg.Now().UTC().Format(mailbox.TimeLayout)}
	if ans.Approve {
		resp.PermissionMode, resp.PlanDigest = "default", mailbox.PlanDigest(f.PlanContent)
	} else if resp.Feedback == "" {
		resp.Feedback = "The plan was not approved; revise it and ask again."
	}
	text, err := mailbox.Encode(resp)
	if err == nil {
		_, err = l.cfg.Mail.Send(ctx, teamName, m.From, mailbox.Message{From: team.LeadName, Text: text})
	}
	switch {
	case err != nil:
		l.event(m.From, EventWarning, "could not send the plan answer to "+m.From+": "+err.Error())
	case ans.Approve:
		l.event(m.From, EventPlan, "the plan of "+m.From+" was approved")
	default:
		l.event(m.From, EventPlan, "the plan of "+m.From+" was sent back"+feedback(resp.Feedback))
	}
}
