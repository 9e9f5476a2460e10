package swarm

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

// What the lead waits to hear back from its teammates, so that Quiet is
// not fooled by a teammate that has taken the lead's mail but not acted
// on it yet:
//
//   - A shutdown request is owed an answer: until the teammate approves
//     or rejects it, or ends, the team is not quiet. When no answer comes
//     within ShutdownAnswerTimeout the lead kills the teammate, removes it
//     and records a problem (Problems).
//   - For teammates that keep mail taken in the middle of a turn for a
//     turn of its own (Claude Code's), every message the lead sent is owed
//     the end of the turn that handles it. Such a teammate removes an
//     entry from its inbox as it takes it, and its isActive is not kept up
//     to date, so neither "gone from the inbox" nor "isActive false" says
//     the message was handled. The lead watches the teammate's inbox
//     instead: mail taken while the teammate is idle starts a turn, mail
//     taken during a turn waits for the next one, and each idle
//     notification ends one turn. A message is handled once the idle
//     notification of its turn has come.
//
// troupe's own teammates mark themselves active before mail leaves their
// inbox and handle mail that comes in during a turn within that turn, so
// for them "unread or active" (Quiet) is already exact.

// Defaults of LeadConfig's waits for teammates' answers.
const (
	DefaultShutdownAnswerTimeout = 2 * time.Minute
	DefaultReplyTimeout          = 5 * time.Minute
)

// Mail returns the lead's mailbox: the store it was configured with,
// where every message the lead sends is recorded as owed an answer (see
// above). The lead's tools send through it.
func (l *Lead) Mail() mailbox.Store { return leadMail{Store: l.cfg.Mail, l: l} }

// Tell sends a person's message to a teammate from the lead's seat (it
// gets it at its next tool-round boundary, or as its next prompt) and puts
// it on the timeline.
func (l *Lead) Tell(ctx context.Context, teammate, text string) error {
	teamName := l.Team()
	if teamName == "" || strings.HasPrefix(teamName, "\x00") {
		return errors.New("the lead has no team to send to")
	}
	if _, err := l.Mail().Send(ctx, teamName, teammate, mailbox.Message{From: team.LeadName, Text: text, Summary: "from the user"}); err != nil {
		return err
	}
	l.eventBody(team.LeadName, EventMessage, fmt.Sprintf("user → %s: %s", teammate, firstLine(text, 100)), text)
	return nil
}

// leadMail records what the lead sends.
type leadMail struct {
	mailbox.Store
	l *Lead
}

// Send implements mailbox.Store.
func (m leadMail) Send(ctx context.Context, teamName, to string, msg mailbox.Message) ([]mailbox.Delivery, error) {
	if msg.From == team.LeadName {
		// What the teammates took before this message counts before it.
		for _, name := range m.l.counted(to) {
			if _, err := m.l.look(ctx, teamName, name); err != nil {
				m.l.cfg.Log.Warn("look at a teammate's inbox", "agent", name, "err", err)
			}
		}
	}
	ds, err := m.Store.Send(ctx, teamName, to, msg)
	if msg.From == team.LeadName {
		for _, d := range ds {
			m.l.sent(teamName, d.To, d.ID, msg.Text)
		}
	}
	return ds, err
}

// turns is the lead's count of the turns of a teammate that queues mail
// taken mid-turn (Claude Code's).
type turns struct {
	unread map[string]bool // inbox ids unread at the lead's last look
	idles  int             // idle notifications received
	busy   bool            // in a turn (took mail, or wrote, since its last idle)
	queued bool            // took mail during this turn: another turn follows
	owed   map[string]int  // the lead's messages: the idles count that handles each (0: not taken yet)
	last   time.Time       // the last sign of the teammate (for ReplyTimeout)
}

// counted returns the teammates whose turns the lead counts among the
// recipients of to (a name or mailbox.Broadcast).
func (l *Lead) counted(to string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for name, m := range l.mates {
		if m.turns != nil && (to == mailbox.Broadcast || to == name) {
			out = append(out, name)
		}
	}
	return out
}

// sent records a message the lead delivered to a teammate it started.
func (l *Lead) sent(teamName, name, id, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.mates[name]
	if m == nil || ended(m.h) {
		return
	}
	if f, err := mailbox.Decode(text); err == nil {
		if req, ok := f.(mailbox.ShutdownRequest); ok {
			if m.shutdownTimer != nil {
				m.shutdownTimer.Stop()
			}
			m.shutdownID = req.RequestID
			reqID := req.RequestID
			m.shutdownTimer = time.AfterFunc(l.cfg.ShutdownAnswerTimeout, func() { l.shutdownUnanswered(teamName, name, reqID) })
		}
	}
	if m.turns != nil {
		m.turns.owed[id] = 0
		m.turns.last = l.cfg.Now()
	}
}

// answered clears the shutdown request owed by name (it approved,
// rejected or ended).
func (l *Lead) answered(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m := l.mates[name]; m != nil {
		m.clearShutdown()
	}
}

func (m *mate) clearShutdown() {
	if m.shutdownTimer != nil {
		m.shutdownTimer.Stop()
	}
	m.shutdownID, m.shutdownTimer = "", nil
}

// look reads the inbox of a teammate whose turns the lead counts and
// notes the mail it took since the last look; it returns how much mail is
// unread there. Mail it took while idle
// starts a turn; mail it took during a turn is handled by the next one.
func (l *Lead) look(ctx context.Context, teamName, name string) (unread int, err error) {
	l.mu.Lock()
	m := l.mates[name]
	counted := m != nil && m.turns != nil
	l.mu.Unlock()
	if !counted {
		return 0, nil
	}
	msgs, err := l.cfg.Mail.Read(ctx, teamName, name, true)
	if err != nil {
		var ce *mailbox.CorruptError
		if !errors.As(err, &ce) {
			return 0, err
		}
	}
	now := make(map[string]bool, len(msgs))
	for _, msg := range msgs {
		// A permission verdict is taken by the turn that waits for it.
		if mailbox.ProtocolKind(msg.Text) != mailbox.KindPermissionResponse {
			now[msg.ID] = true
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mates[name] != m || m.turns == nil {
		return len(msgs), nil
	}
	t := m.turns
	taken := false
	for id := range t.unread {
		if !now[id] {
			taken = true
		}
	}
	var owedTaken []string
	for id, n := range t.owed {
		if n == 0 && !now[id] {
			owedTaken = append(owedTaken, id)
		}
	}
	if taken || len(owedTaken) > 0 {
		turn := t.idles + 1
		if t.busy {
			turn, t.queued = t.idles+2, true
		}
		t.busy = true
		for _, id := range owedTaken {
			t.owed[id] = turn
		}
		t.last = l.cfg.Now()
	}
	t.unread = now
	return len(msgs), nil
}

// heard notes mail from a teammate whose turns the lead counts: an idle
// notification ends a turn; anything else shows it in one.
func (l *Lead) heard(name string, idle bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.mates[name]
	if m == nil || m.turns == nil {
		return
	}
	t := m.turns
	t.last = l.cfg.Now()
	if !idle {
		t.busy = true
		return
	}
	t.idles++
	if t.queued {
		t.queued = false
	} else {
		t.busy = false
	}
	for id, n := range t.owed {
		if n > 0 && n <= t.idles {
			delete(t.owed, id)
		}
	}
}

// owing returns what the team still owes the lead: teammates with an
// unanswered shutdown request, and those whose turns the lead counts
// with a message of the lead's not yet handled. A message waits at most
// ReplyTimeout after the teammate's last sign; then it counts as handled,
// with a warning.
func (l *Lead) owing() []string {
	var out, stale []string
	defer func() {
		for _, name := range stale {
			l.event(name, EventWarning, fmt.Sprintf("%s showed no sign of handling the lead's messages for %s; no longer waiting for it", name, l.cfg.ReplyTimeout))
		}
	}()
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.cfg.Now()
	for _, name := range slices.Sorted(maps.Keys(l.mates)) {
		m := l.mates[name]
		if ended(m.h) {
			continue
		}
		if m.shutdownID != "" {
			out = append(out, name+" owes an answer to the shutdown request "+m.shutdownID)
			continue
		}
		if m.turns == nil || len(m.turns.owed) == 0 {
			continue
		}
		if now.Sub(m.turns.last) > l.cfg.ReplyTimeout {
			clear(m.turns.owed)
			stale = append(stale, name)
			continue
		}
		out = append(out, fmt.Sprintf("%s has %d message(s) of the lead's not yet handled", name, len(m.turns.owed)))
	}
	return out
}

// shutdownUnanswered ends a teammate that did not answer the shutdown
// request id within ShutdownAnswerTimeout: kills it, removes it from the
// team, releases its tasks, tells the lead and records a problem.
func (l *Lead) shutdownUnanswered(teamName, name, id string) {
	l.mu.Lock()
	m := l.mates[name]
	if m == nil || m.shutdownID != id || ended(m.h) {
		l.mu.Unlock()
		return
	}
	m.shutdownID, m.shutdownTimer = "", nil
	m.expected = true
	l.ending++
	l.mu.Unlock()
	defer l.endWork()
	why := fmt.Sprintf("%s did not answer the shutdown request within %s; killed it", name, l.cfg.ShutdownAnswerTimeout)
	l.event(name, EventWarning, why)
	l.problem(why)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if m.h != nil {
		if err := m.h.Kill(ctx); err != nil {
			l.cfg.Log.Warn("kill a teammate that did not answer its shutdown request", "agent", name, "err", err)
		}
	}
	l.shutMu.Lock()
	defer l.shutMu.Unlock()
	released := l.removeMate(ctx, teamName, name)
	l.event(name, EventExit, name+" was removed from the team"+releasedNote(released))
	l.deliver(fmt.Sprintf("<system-reminder>\nTeammate %s did not answer your shutdown request within %s; it was killed and removed from the team.%s\n</system-reminder>",
		name, l.cfg.ShutdownAnswerTimeout, releasedNote(released)))
}

// problem records something the team did not end as the lead intended.
func (l *Lead) problem(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.problems = append(l.problems, s)
}

// Problems returns what did not end as the lead intended: teammates
// killed because they did not answer a shutdown request or did not exit
// after approving one, and a team whose deletion failed and that is still
// there. A headless run that ends with problems exits non-zero.
func (l *Lead) Problems() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Clone(l.problems)
	if l.deleteErr != nil && l.team != "" && !strings.HasPrefix(l.team, "\x00") {
		out = append(out, fmt.Sprintf("team %q could not be deleted: %v", l.team, l.deleteErr))
	}
	return out
}

// watchMate follows the inbox of a teammate whose turns the lead counts,
// so that the lead sees when it takes mail, until it ends.
func (l *Lead) watchMate(ctx context.Context, teamName string, m *mate) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-m.h.Done():
		case <-ctx.Done():
		}
		cancel()
	}()
	kick, err := l.cfg.Mail.Watch(ctx, teamName, m.info.Name)
	if err != nil {
		l.cfg.Log.Warn("watch a teammate's inbox", "agent", m.info.Name, "err", err)
		return
	}
	for {
		if _, err := l.look(ctx, teamName, m.info.Name); err != nil && ctx.Err() == nil {
			l.cfg.Log.Warn("look at a teammate's inbox", "agent", m.info.Name, "err", err)
		}
		l.bump()
		if _, ok := <-kick; !ok {
			return
		}
	}
}
