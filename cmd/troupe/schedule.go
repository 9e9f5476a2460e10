package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/schedule"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/session/record"
	"github.com/troupe-dev/troupe/tool"
)

// envTestWakeupMin is TEST-ONLY: a duration ("200ms") that lowers
// ScheduleWakeup's shortest delay (60 s) so end-to-end tests can see a
// wakeup fire; nothing else reads it, and it is not documented for
// users.
const envTestWakeupMin = "TROUPE_TEST_WAKEUP_MIN"

// addScheduleFlags puts the schedule's flags (docs/schedule.md) on f.
func addScheduleFlags(f *pflag.FlagSet, maxWakeups *int) {
	f.IntVar(maxWakeups, "max-wakeups", 0, "with -p: end the run after `N` firings of its cron jobs and wakeups (0: run while any is pending)")
}

// openSchedule builds the session's schedule (docs/schedule.md): restored
// from prev, the resumed session's record, each change recorded in
// lr.rec and reported to the session. It is started by startSchedule,
// once the lead exists, and closed before the session. A headless run
// says each firing on stderr in text output.
func (a *app) openSchedule(h *headless, lr *leadRun, prev *record.File, interactive bool) error {
	if h.maxWakeups < 0 {
		return cli.Usagef("--max-wakeups %d: want 0 (no bound) or a positive number", h.maxWakeups)
	}
	var min time.Duration
	if v := a.Getenv(envTestWakeupMin); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("%s %s: want a positive duration", envTestWakeupMin, strconv.Quote(v))
		}
		min = d
	}
	var st schedule.State
	if prev != nil && prev.Schedule != nil {
		st = *prev.Schedule
	}
	sess := lr.bg.sess
	// The schedule reads the real clock, not a.Now: it waits on real
	// timers, and the two must agree (a fixed a.Now in tests would make
	// nothing ever due).
	sc, err := schedule.New(schedule.Config{Fire: sess.Scheduled, MinDelay: min, MaxFirings: h.maxWakeups,
		Save: func(st schedule.State) {
			lr.rec.Schedule(st)
			sess.ScheduleChanged(st)
		}}, st)
	if err != nil {
		return err
	}
	sess.SetSchedule(sc)
	lr.sched = sc
	if !interactive {
		lr.bg.notice = a.Stderr
		if n := len(st.Jobs); n > 0 || st.Wakeup != nil {
			fmt.Fprintf(a.Stderr, "troupe: the resumed session has %d cron job(s)%s scheduled: this run stays up for them (--max-wakeups N bounds it)\n",
				n, map[bool]string{true: " and a wakeup", false: ""}[st.Wakeup != nil])
		}
	}
	return nil
}

// startSchedule starts lr's schedule: what came due while the session
// was down fires now. The schedule stops before the session closes.
func (lr *leadRun) startSchedule(ctx context.Context) error {
	if lr.sched == nil {
		return nil
	}
	lr.defer_(lr.sched.Close)
	return lr.sched.Start(ctx)
}

// scheduleTools adds the schedule's tools to a lead's, allowed without
// asking: they only schedule the lead's own prompts.
func (lr *leadRun) scheduleTools(tools []tool.Tool, ap *approve.Approver) ([]tool.Tool, *approve.Approver) {
	if lr.sched == nil {
		return tools, ap
	}
	return append(tools, lr.sched.Tools()...), kit.WithAllow(ap, schedule.Names...)
}

// scheduleState returns the schedule's state now, nil without one.
func (lr *leadRun) scheduleState() *schedule.State {
	if lr.sched == nil {
		return nil
	}
	st := lr.sched.State()
	return &st
}
