package tui

import (
	"fmt"
	"regexp"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/troupe-dev/troupe/schedule"
	"github.com/troupe-dev/troupe/session"
)

// Scheduler is the ability of a Driver to hold a schedule (cron jobs
// and the wakeup), which /loop needs; a *session.Session has it. The
// schedule is nil when the session has none.
type Scheduler interface {
	Schedule() *schedule.Schedule
}

// loopUsage is what /loop without a prompt shows.
const loopUsage = "Usage: /loop [interval] PROMPT: repeat PROMPT every interval (30s, 10m, 2h, 1d; a cron job), or without an interval as often as the lead judges (it sets a wakeup each time). /loop stop ends every loop. /loop list shows them."

// intervalToken is a /loop's leading interval.
var intervalToken = regexp.MustCompile(`^\d+[smhd]$`)

// dynamicLoop is the prompt of a /loop without an interval: the lead
// does the task, then paces the next time itself with ScheduleWakeup.
func dynamicLoop(prompt string) string {
	return "/loop (self-paced): do the task below now. Then, if it should run again, call ScheduleWakeup with the same task as its prompt and a delay suited to how fast what you watch changes; when it no longer needs repeating, call ScheduleWakeup with stop true.\n\nTask: " + prompt
}

// loop is /loop: with an interval, a recurring cron job and the prompt
// run once now; without one, the prompt with the self-paced
// instructions; "stop" clears the schedule; "list" shows it.
func (m *model) loop(args string) tea.Cmd {
	sch, ok := m.drv.(Scheduler)
	if !ok {
		m.convo.add(entry{kind: entryError, text: "/loop: this session has no schedule"})
		return nil
	}
	// The schedule is looked up in the commands: Update takes no
	// session lock.
	with := func(f func(sc *schedule.Schedule) tea.Msg) tea.Cmd {
		return func() tea.Msg {
			sc := sch.Schedule()
			if sc == nil {
				return noticeMsg("⚠ /loop: this session has no schedule")
			}
			return f(sc)
		}
	}
	first, rest, _ := strings.Cut(args, " ")
	rest = strings.TrimSpace(rest)
	switch {
	case args == "":
		m.convo.add(entry{kind: entryNotice, text: loopUsage})
		return nil
	case args == "stop":
		return with(func(sc *schedule.Schedule) tea.Msg {
			jobs, wake := sc.Clear()
			if jobs == 0 && !wake {
				return noticeMsg("No loop was running.")
			}
			what := fmt.Sprintf("%d cron job(s) deleted", jobs)
			if wake {
				what += ", the wakeup cancelled"
			}
			return noticeMsg("Stopped: " + what + ".")
		})
	case args == "list":
		return with(func(sc *schedule.Schedule) tea.Msg { return noteMsg(schedule.Listing(sc.State())) })
	case intervalToken.MatchString(first):
		if rest == "" {
			m.convo.add(entry{kind: entryNotice, text: loopUsage})
			return nil
		}
		expr, err := schedule.Interval(first)
		if err != nil {
			m.convo.add(entry{kind: entryError, text: "/loop: " + err.Error()})
			return nil
		}
		m.say("/loop " + args)
		drv, ctx := m.drv, m.ctx
		return with(func(sc *schedule.Schedule) tea.Msg {
			j, err := sc.Create(expr, rest, true)
			if err != nil {
				return noticeMsg("⚠ /loop: " + err.Error())
			}
			drv.Submit(ctx, rest) // the first time is now
			return noticeMsg(fmt.Sprintf("⏰ Every %s (job %s, cron %s) until /loop stop: %s", first, j.ID, j.Cron, rest))
		})
	}
	m.say("/loop " + args)
	drv, ctx, prompt := m.drv, m.ctx, dynamicLoop(args)
	return func() tea.Msg { drv.Submit(ctx, prompt); return nil }
}

// scheduleEvent takes in the schedule's events: a firing is an input
// line marked as scheduled, a change updates the footer's next wake.
func (m *model) scheduleEvent(e session.Event) {
	switch {
	case e.Firing != nil:
		m.convo.add(entry{kind: entryUser, text: e.Text}) // delivered between turns
		m.convo.follow()
	case e.Schedule != nil:
		m.sched = *e.Schedule
	}
}

// loopPill is the footer's "next wake 14:05", "" when nothing is
// scheduled.
func (m *model) loopPill() string {
	t := schedule.Next(m.sched)
	if t.IsZero() {
		return ""
	}
	f := "15:04"
	if t.Sub(m.now) < 0 || t.Format("2006-01-02") != m.now.Format("2006-01-02") {
		f = "Jan 2 15:04"
	}
	return "next wake " + t.Local().Format(f)
}
