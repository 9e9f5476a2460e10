package swarm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/internal/inert"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// supervise waits for a teammate's end and, unless it was expected,
// handles its death.
func (l *Lead) supervise(teamName string, m *mate) {
	<-m.h.Done()
	l.reap(m)
	l.mu.Lock()
	m.clearShutdown() // an ended teammate owes nothing
	expected := m.expected
	if l.mates[m.info.Name] == m {
		delete(l.mates, m.info.Name)
	}
	delete(l.hidden, m.info.PaneID)
	if !expected {
		l.ending++ // the team is busy until the lead has been told
	}
	l.mu.Unlock()
	// After the count above: the task's end wakes a waiting lead, which
	// must not find the team quiet before the death is reported.
	switch {
	case m.h.Err() == nil:
		l.endMateTask(m, task.Completed)
	case expected:
		l.endMateTask(m, task.Killed)
	default:
		l.endMateTask(m, task.Failed)
	}
	if expected {
		return
	}
	defer l.endWork()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := m.h.Err()
	if err == nil && l.approvedShutdown(ctx, teamName, m.info.Name) {
		// It approved its shutdown and ended before the lead handled the
		// approval: the pump reports it ("has shut down"), once.
		return
	}
	if err == nil {
		// A clean exit: a process that ended on its own. Not a death;
		// its tasks go back to the list.
		if _, uerr := team.UpdateMember(ctx, l.cfg.Teams, teamName, m.info.Name, func(mm *team.Member) error {
			f := false
			mm.IsActive = &f
			return nil
		}); uerr != nil && !errors.Is(uerr, team.ErrNotFound) {
			l.cfg.Log.Warn("mark an exited teammate inactive", "agent", m.info.Name, "err", uerr)
		}
		released := l.release(ctx, teamName, m.info.Name)
		l.event(m.info.Name, EventExit, m.info.Name+" exited"+releasedNote(released))
		if len(released) > 0 {
			l.deliver(fmt.Sprintf("<system-reminder>\nTeammate %s exited.%s\n</system-reminder>", m.info.Name, releasedNote(released)))
		}
		l.bump()
		return
	}
	why := err.Error()
	var panicked interface{ PanicStack() []byte }
	if errors.As(err, &panicked) {
		// The stack is for whoever reads the log; the lead's model gets
		// the one line.
		l.cfg.Log.Error("teammate panicked", "agent", m.info.Name, "err", err, "stack", string(panicked.PanicStack()))
	}
	l.markDead(ctx, teamName, m.info.Name)
	released := l.release(ctx, teamName, m.info.Name)
	// Its idle notice, if one waits in the digest, is stale: a dead
	// teammate is not idle. What it reported in it is not lost: it goes
	// with the death notice.
	report := l.bury(m.info.Name)
	l.event(m.info.Name, EventDead, fmt.Sprintf("%s died (%s)%s", m.info.Name, why, releasedNote(released)))
	l.deliver(fmt.Sprintf("<system-reminder>\nTeammate %s died unexpectedly (%s); it is marked dead in the team file.%s You can spawn a replacement with the Agent tool.%s\n</system-reminder>",
		m.info.Name, why, releasedNote(released), report))
	l.bump()
}

// bury marks teammate name dead, so that an idle notice of its that comes
// later is not reported as idle (Lead.idle), and takes its entry out of
// the idle digest. It returns what that entry reported (a result, a
// completed task) for the death notice, "" when nothing.
func (l *Lead) bury(name string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dead == nil {
		l.dead = map[string]bool{}
	}
	l.dead[name] = true
	var report string
	l.digest = slices.DeleteFunc(l.digest, func(n mailbox.IdleNotification) bool {
		if n.From != name {
			return false
		}
		report = lastReport(n)
		return true
	})
	return report
}

// lastReport renders what a dead teammate's last idle notification
// reported, for its death notice ("" when nothing).
func lastReport(n mailbox.IdleNotification) string {
	var b strings.Builder
	if n.CompletedTaskID != "" {
		fmt.Fprintf(&b, " Before it died it completed task #%s (%s).", inert.Tags(n.CompletedTaskID), inert.Tags(n.CompletedStatus))
	}
	if n.Result != "" {
		// The teammate's words, inside a system reminder: they cannot close it.
		fmt.Fprintf(&b, "\nIts last report, sent before it died:\n%s", inert.Tags(n.Result))
	}
	return b.String()
}

// markDead records in the team file that member name's process died:
// inactive, with the dead status (StatusKey). A member already gone is
// left so.
func (l *Lead) markDead(ctx context.Context, teamName, name string) {
	if _, err := team.UpdateMember(ctx, l.cfg.Teams, teamName, name, func(mm *team.Member) error {
		f := false
		mm.IsActive = &f
		if mm.Extra == nil {
			mm.Extra = map[string]json.RawMessage{}
		}
		mm.Extra[StatusKey] = json.RawMessage(`"` + StatusDead + `"`)
		return nil
	}); err != nil && !errors.Is(err, team.ErrNotFound) {
		l.cfg.Log.Warn("mark a dead teammate", "agent", name, "err", err)
	}
}

// reap kills what an ended pane teammate's process left running
// (LeadConfig.Reap): nothing it started outlives it, and a task released
// next cannot be claimed while its old command still runs.
func (l *Lead) reap(m *mate) {
	if l.cfg.Reap == nil || m.h.Backend() == backend.InProcess {
		return
	}
	pid := 0
	if p, ok := m.h.(interface{ PID() int }); ok {
		pid = p.PID()
	}
	l.cfg.Reap(m.info.AgentID, pid)
}

// StatusKey is the member key troupe records a teammate's state under
// when the team file has no field for it; StatusDead marks a teammate
// whose process died (as opposed to idle, isActive false).
const (
	StatusKey  = "troupeStatus"
	StatusDead = "dead"
)

// endWork ends one piece of work counted in ending (mail being handed to
// the lead's model, a shutdown or death being handled) and wakes a
// waiting lead: a lead that saw it in flight waits for this kick.
func (l *Lead) endWork() {
	l.mu.Lock()
	l.ending--
	l.mu.Unlock()
	l.bump()
}

// removeMate removes a teammate that has ended from the team file and
// releases its tasks; the caller holds shutMu.
func (l *Lead) removeMate(ctx context.Context, teamName, name string) []tasklist.Task {
	if err := team.RemoveMember(ctx, l.cfg.Teams, teamName, name); err != nil && !errors.Is(err, team.ErrNotFound) {
		l.cfg.Log.Warn("remove a teammate that ended", "agent", name, "err", err)
	}
	return l.release(ctx, teamName, name)
}

func (l *Lead) release(ctx context.Context, teamName, name string) []tasklist.Task {
	ts, err := tasklist.New(l.cfg.Tasks, teamName).Release(ctx, name)
	if err != nil {
		l.cfg.Log.Warn("release the tasks of a teammate", "agent", name, "err", err)
	}
	return ts
}

func releasedNote(ts []tasklist.Task) string {
	if len(ts) == 0 {
		return ""
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("#%s %q", t.ID, inert.Tags(t.Subject)) // a member's words, in a system reminder
	}
	return fmt.Sprintf(" %d task(s) were unassigned: %s. Use TaskList to see them.", len(ts), strings.Join(parts, ", "))
}

// Running returns how many teammates the lead started still run.
func (l *Lead) Running() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.mates {
		if m.h != nil && !ended(m.h) {
			n++
		}
	}
	return n
}

// Changed returns a channel kicked when something in the team changes (a
// teammate's message, spawn, exit or death), for a lead that waits.
func (l *Lead) Changed() <-chan struct{} { return l.changed }

// Quiet reports whether the team has nothing in flight: no mail, shutdown
// or death being handled, no shutdown request unanswered, no message of
// the lead's that a queuing (Claude Code) teammate has not handled yet
// (lead_owed.go), no running teammate working (isActive in the team file)
// or with unread mail, and no task waiting for an idle teammate to claim
// it. A headless lead ends its session only when the team is quiet and its
// own model has nothing pending (docs/teams.md).
func (l *Lead) Quiet(ctx context.Context) (bool, error) {
	teamName := l.Team()
	if teamName == "" || strings.HasPrefix(teamName, "\x00") {
		return true, nil
	}
	l.mu.Lock()
	if l.ending > 0 {
		l.mu.Unlock()
		return false, nil
	}
	l.mu.Unlock()
	// A shutdown request not answered, or a message a queuing teammate
	// has not handled yet, is work (lead_owed.go). A look at their
	// inboxes first: the watch may not have run since they last took mail.
	looked := map[string]bool{} // their unread mail is counted here, not read again below
	for _, name := range l.counted(mailbox.Broadcast) {
		unread, err := l.look(ctx, teamName, name)
		if err != nil {
			return false, err
		}
		if unread > 0 {
			return false, nil
		}
		looked[name] = true
	}
	if len(l.owing()) > 0 {
		return false, nil
	}
	l.mu.Lock()
	var running []string
	for name, m := range l.mates {
		if m.h == nil || !ended(m.h) {
			running = append(running, name)
		}
	}
	l.mu.Unlock()
	// Mail the lead has not read yet (an approval, a report) is work.
	if msgs, err := l.cfg.Mail.Read(ctx, teamName, team.LeadName, true); err != nil {
		return false, err
	} else if len(msgs) > 0 {
		return false, nil
	}
	if len(running) == 0 {
		return true, nil
	}
	cfg, err := l.cfg.Teams.Get(ctx, teamName)
	if err != nil {
		return false, err
	}
	idle := 0
	for _, name := range running {
		m, ok := cfg.Member(name)
		if !ok {
			continue
		}
		if m.Active() {
			return false, nil
		}
		if !looked[name] {
			msgs, err := l.cfg.Mail.Read(ctx, teamName, name, true)
			if err != nil {
				return false, err
			}
			if len(msgs) > 0 {
				l.watchUnread(teamName, name)
				return false, nil
			}
		}
		if !m.PlanModeRequired && (!l.cfg.NoAutoClaim || m.BackendType == backend.InProcess) {
			idle++
		}
	}
	if idle > 0 {
		tasks, err := tasklist.New(l.cfg.Tasks, teamName).Tasks(ctx)
		if err != nil {
			return false, err
		}
		for _, t := range tasks {
			if tasklist.Claimable(t, tasks) {
				return false, nil
			}
		}
	}
	return true, nil
}

// approvedShutdown reports whether name approved its shutdown: the
// approval is unread in the lead's inbox, or the pump has taken it (it
// notes approvals before it marks them read, so one of the two holds).
func (l *Lead) approvedShutdown(ctx context.Context, teamName, name string) bool {
	msgs, err := l.cfg.Mail.Read(ctx, teamName, team.LeadName, true)
	if err == nil {
		for _, msg := range msgs {
			if msg.From == name && mailbox.ProtocolKind(msg.Text) == mailbox.KindShutdownApproved {
				return true
			}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.approved[name]
}

// watchUnread wakes a waiting lead (bump) at the next change of the inbox
// of a teammate idle in the team file with unread mail. A teammate whose
// run ends within its ActiveDelay never writes its flag: it sends its idle
// notification and then marks its mail read, and the lead, which may look
// in between, watches neither inbox otherwise. One watch per teammate at
// a time; it ends at its first kick, or with the lead.
func (l *Lead) watchUnread(teamName, name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.unreadWatch[name] || l.closing {
		return
	}
	if l.unreadWatch == nil {
		l.unreadWatch = map[string]bool{}
	}
	l.unreadWatch[name] = true
	// Started under l.mu, which Close takes to set closing: the Add
	// cannot race with Close's Wait.
	l.wg.Go(func() {
		ctx, cancel := context.WithCancel(l.watchCtx)
		defer cancel()
		kick, err := l.cfg.Mail.Watch(ctx, teamName, name)
		if err == nil {
			// A change between the caller's read and the watch: the
			// next Quiet sees it.
			l.bump()
			select {
			case <-kick:
			case <-ctx.Done():
			}
		}
		l.mu.Lock()
		delete(l.unreadWatch, name)
		l.mu.Unlock()
		l.bump() // after the delete: a Quiet that still finds mail watches again
	})
}
