package schedule

import (
	"fmt"
	"strings"
	"time"
)

// Firing is one scheduled prompt come due, handed to the session as
// input.
type Firing struct {
	Kind   string    `json:"kind"`             // KindCron or KindWakeup
	JobID  string    `json:"job_id,omitempty"` // KindCron
	Cron   string    `json:"cron,omitempty"`   // KindCron
	Reason string    `json:"reason,omitempty"` // KindWakeup
	Prompt string    `json:"prompt"`
	At     time.Time `json:"at"` // when it was due
	// Final: the job goes with this firing (one-shot, or a recurring
	// job at MaxAge).
	Final bool `json:"final,omitempty"`
}

// The kinds of Firing.
const (
	KindCron   = "cron"
	KindWakeup = "wakeup"
)

// Text is the firing as the model reads it: the prompt inside a
// <scheduled-task> wrapper that says it was scheduled, not typed.
func (f Firing) Text() string {
	var b strings.Builder
	switch f.Kind {
	case KindWakeup:
		fmt.Fprintf(&b, "<scheduled-task kind=%q reason=%q>\n", KindWakeup, f.Reason)
		b.WriteString("[SCHEDULED WAKEUP - NOT TYPED BY THE USER] The wakeup you set with ScheduleWakeup is due. Its prompt:\n")
	default:
		fmt.Fprintf(&b, "<scheduled-task id=%q kind=%q cron=%q>\n", f.JobID, KindCron, f.Cron)
		b.WriteString("[SCHEDULED TASK - NOT TYPED BY THE USER] The cron job you created with CronCreate fired")
		if f.Final {
			b.WriteString(" for the last time (it is deleted now)")
		}
		b.WriteString(". Its prompt:\n")
	}
	b.WriteString(f.Prompt)
	b.WriteString("\n</scheduled-task>")
	return b.String()
}

// Label is the firing as a person reads it on an input line.
func (f Firing) Label() string {
	if f.Kind == KindWakeup {
		return "⏰ wakeup: " + f.Prompt
	}
	return "⏰ scheduled " + f.JobID + ": " + f.Prompt
}

// Due returns the firings due at now in st, and st after them. A
// recurring job fires once however many of its times passed (a session
// that was down for an hour fires a 10-minute job once on resume, not
// six times) and its next time is counted from now; a one-shot job and
// the wakeup fire once and go; a recurring job MaxAge old fires a last
// time and goes. Due is pure: st is not changed.
func Due(st State, now time.Time) ([]Firing, State) {
	var out []Firing
	next := State{Jobs: make([]Job, 0, len(st.Jobs)), Wakeup: st.Wakeup}
	for _, j := range st.Jobs {
		at := j.next()
		if at.IsZero() || at.After(now) {
			next.Jobs = append(next.Jobs, j)
			continue
		}
		final := !j.Recurring || now.Sub(j.Created) >= MaxAge
		out = append(out, Firing{Kind: KindCron, JobID: j.ID, Cron: j.Cron, Prompt: j.Prompt, At: at, Final: final})
		if !final {
			j.Last = now
			next.Jobs = append(next.Jobs, j)
		}
	}
	if w := st.Wakeup; w != nil && !w.At.After(now) {
		out = append(out, Firing{Kind: KindWakeup, Reason: w.Reason, Prompt: w.Prompt, At: w.At, Final: true})
		next.Wakeup = nil
	}
	return out, next
}

// unfire returns after (Due's state from before) with only the firings
// fs applied: the jobs and wakeup whose firings were dropped (MaxFirings
// reached) are as they were before, so the record keeps them unfired.
func unfire(before, after State, fs []Firing) State {
	fired := map[string]bool{}
	wake := false
	for _, f := range fs {
		if f.Kind == KindWakeup {
			wake = true
		} else {
			fired[f.JobID] = true
		}
	}
	var out State
	for _, j := range before.Jobs {
		if !fired[j.ID] {
			out.Jobs = append(out.Jobs, j) // not fired: as it was
			continue
		}
		for _, k := range after.Jobs {
			if k.ID == j.ID {
				out.Jobs = append(out.Jobs, k) // fired and kept
			}
		}
	}
	out.Wakeup = before.Wakeup
	if wake {
		out.Wakeup = after.Wakeup
	}
	return out
}

// Next returns the earliest time something in st is due; the zero time
// when nothing is scheduled.
func Next(st State) time.Time {
	var t time.Time
	for _, j := range st.Jobs {
		if at := j.next(); !at.IsZero() && (t.IsZero() || at.Before(t)) {
			t = at
		}
	}
	if w := st.Wakeup; w != nil && (t.IsZero() || w.At.Before(t)) {
		t = w.At
	}
	return t
}

// next is the job's next time: the first after Last (or Created) that
// its expression matches.
func (j Job) next() time.Time {
	from := j.Last
	if from.IsZero() {
		from = j.Created
	}
	return next(j.Cron, from)
}
