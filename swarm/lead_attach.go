package swarm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// Member states a resumed lead finds (Reattach).
const (
	// MateGone: the member's process has ended (an in-process teammate of
	// the lead that died, a pane teammate that died or left).
	MateGone = iota
	// MateRunning: the member's process still runs, in a pane the
	// resumed lead did not create and cannot supervise.
	MateRunning
)

// MateState tells a resumed lead whether member m's process still runs.
type MateState func(m team.Member) int

// Reattached is what Reattach found and did.
type Reattached struct {
	Team string
	// Dead are the members whose process had ended, now marked dead;
	// Stopped the pane teammates still running, which the lead stopped.
	Dead, Stopped []string
	// Released are the tasks taken back from both.
	Released []tasklist.Task
}

// Reattach makes a lead that comes back (--continue, --resume, after its
// process ended without removing its team: a crash, a SIGKILL) the lead of
// the team its session created: the newest team whose leadSessionId is
// the lead's session. It reads the lead's inbox and watches the team
// again. A member whose process is gone is marked dead; a pane teammate
// still running cannot be supervised by a new process (its pane was
// made by the old one), so stop ends it (its process and its recorded
// process groups) and it is removed from the team. Either way what it
// left running is reaped (LeadConfig.Reap) before its tasks are
// released, and the lead's model is told. With no such team, or a team
// already led, it does nothing and returns a zero Reattached.
func (l *Lead) Reattach(ctx context.Context, state MateState, stop func(m team.Member)) (Reattached, error) {
	l.mu.Lock()
	busy := l.team != ""
	l.mu.Unlock()
	if busy || l.cfg.Session == "" {
		return Reattached{}, nil
	}
	teams, err := l.cfg.Teams.List(ctx)
	var found *team.Config
	for i := range teams {
		if teams[i].LeadSessionID == l.cfg.Session && (found == nil || teams[i].CreatedAt > found.CreatedAt) {
			found = &teams[i]
		}
	}
	if found == nil {
		if err != nil {
			return Reattached{}, fmt.Errorf("find the team of session %s: %w", l.cfg.Session, err)
		}
		return Reattached{}, nil
	}
	name := found.Name
	l.mu.Lock()
	if l.team != "" {
		l.mu.Unlock()
		return Reattached{}, nil
	}
	l.team = "\x00creating"
	l.mu.Unlock()
	if err := l.startInbox(name); err != nil {
		l.mu.Lock()
		l.team = ""
		l.mu.Unlock()
		return Reattached{}, err
	}
	l.mu.Lock()
	l.team = name
	l.led = append(l.led, name)
	l.mu.Unlock()
	r := Reattached{Team: name}
	for _, m := range found.Members {
		if m.IsLead() {
			continue
		}
		running := m.BackendType != backend.InProcess && state != nil && state(m) == MateRunning
		if running && stop != nil {
			stop(m)
		}
		if l.cfg.Reap != nil && m.BackendType != backend.InProcess {
			l.cfg.Reap(m.AgentID, 0)
		}
		if running {
			if err := team.RemoveMember(ctx, l.cfg.Teams, name, m.Name); err != nil && !errors.Is(err, team.ErrNotFound) {
				l.cfg.Log.Warn("remove a teammate stopped at resume", "agent", m.Name, "err", err)
			}
			r.Stopped = append(r.Stopped, m.Name)
		} else if markDead(m) {
			l.markDead(ctx, name, m.Name)
			r.Dead = append(r.Dead, m.Name)
		}
		r.Released = append(r.Released, l.release(ctx, name, m.Name)...)
	}
	l.event(team.LeadName, EventCreated, fmt.Sprintf("resumed as the lead of team %q%s", name, r.summary()))
	l.deliver(fmt.Sprintf("<system-reminder>\nYou are again the lead of team %q, which this session created before it was interrupted.%s Spawn teammates again with the Agent tool if the work needs them.\n</system-reminder>", name, r.summary()))
	l.bump()
	return r, nil
}

// markDead reports whether m, found gone at resume, is still to be
// marked dead.
func markDead(m team.Member) bool {
	raw, ok := m.Extra[StatusKey]
	return !ok || strings.Trim(string(raw), `"`) != StatusDead
}

func (r Reattached) summary() string {
	var b strings.Builder
	if len(r.Dead) > 0 {
		fmt.Fprintf(&b, " Teammate(s) %s had died with the session; they are marked dead.", strings.Join(r.Dead, ", "))
	}
	if len(r.Stopped) > 0 {
		fmt.Fprintf(&b, " Teammate(s) %s were still running from before and were stopped.", strings.Join(r.Stopped, ", "))
	}
	b.WriteString(releasedNote(r.Released))
	return b.String()
}
