package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// The tools' names, as Claude Code names them.
const (
	NameCronCreate     = "CronCreate"
	NameCronList       = "CronList"
	NameCronDelete     = "CronDelete"
	NameScheduleWakeup = "ScheduleWakeup"
)

// Names are the names of the tools Tools returns.
var Names = []string{NameCronCreate, NameCronList, NameCronDelete, NameScheduleWakeup}

// Tools returns the lead's scheduling tools over s: CronCreate,
// CronList, CronDelete and ScheduleWakeup. They change only the
// session's own schedule, so they ask no permission.
func (s *Schedule) Tools() []tool.Tool {
	return []tool.Tool{&cronCreate{s}, &cronList{s}, &cronDelete{s}, &scheduleWakeup{s}}
}

type cronCreate struct{ s *Schedule }
type cronList struct{ s *Schedule }
type cronDelete struct{ s *Schedule }
type scheduleWakeup struct{ s *Schedule }

var (
	_ tool.Tool = (*cronCreate)(nil)
	_ tool.Tool = (*cronList)(nil)
	_ tool.Tool = (*cronDelete)(nil)
	_ tool.Tool = (*scheduleWakeup)(nil)
)

const cronCreateSchema = `{"type":"object","properties":{` +
	`"cron":{"type":"string","description":"A standard 5-field cron expression in local time: minute hour day-of-month month day-of-week, e.g. \"*/5 * * * *\" (every 5 minutes), \"0 9 * * 1-5\" (weekdays at 9:00)."},` +
	`"prompt":{"type":"string","description":"The prompt to run at each firing."},` +
	`"recurring":{"type":"boolean","description":"true (the default): fire at every match until deleted or 7 days old. false: fire once at the next match, then delete the job."},` +
	`"durable":{"type":"boolean","description":"Accepted for Claude Code compatibility; every job is kept in the session record and restored by --resume."}` +
	`},"required":["cron","prompt"],"additionalProperties":false}`

func (*cronCreate) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: NameCronCreate, InputSchema: json.RawMessage(cronCreateSchema), Description: fmt.Sprintf(
		"Schedules a prompt to run later in this session, on a 5-field cron expression in local time.\n"+
			"- recurring (default true) fires at every match; recurring false fires once (\"remind me at 14:30\": pin minute and hour, day and month).\n"+
			"- A firing comes to you as input in a <scheduled-task> block between turns, never while you work; if you are busy it waits for your turn to end.\n"+
			"- A job that could not fire while the session was down fires once when it resumes, not once per missed time.\n"+
			"- Recurring jobs are deleted after 7 days, after a last firing. A session holds at most %d jobs. Returns the job id, for CronDelete.", MaxJobs)}
}

func (*cronCreate) ReadOnly(json.RawMessage) bool { return false }

func (c *cronCreate) Run(_ context.Context, call tool.Call) (tool.Result, error) {
	var in struct {
		Cron      string `json:"cron"`
		Prompt    string `json:"prompt"`
		Recurring *bool  `json:"recurring"`
		Durable   *bool  `json:"durable"`
	}
	if r, ok := tool.Decode(NameCronCreate, call.Input, &in); !ok {
		return r, nil
	}
	recurring := in.Recurring == nil || *in.Recurring
	j, err := c.s.Create(in.Cron, in.Prompt, recurring)
	if err != nil {
		return tool.Errorf("%s: %v", NameCronCreate, err), nil
	}
	what := "recurring"
	if !recurring {
		what = "one-shot"
	}
	at := j.next()
	return tool.Result{Content: fmt.Sprintf("Scheduled %s job %s (%s); next firing %s.", what, j.ID, j.Cron, at.Format("2006-01-02 15:04 MST"))}, nil
}

func (*cronList) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: NameCronList, InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Description: "Lists the cron jobs of this session (CronCreate's): id, expression, recurring or one-shot, next firing and prompt; and the pending ScheduleWakeup, if any."}
}

func (*cronList) ReadOnly(json.RawMessage) bool { return true }

func (c *cronList) Run(_ context.Context, call tool.Call) (tool.Result, error) {
	var in struct{}
	if r, ok := tool.Decode(NameCronList, call.Input, &in); !ok {
		return r, nil
	}
	return tool.Result{Content: Listing(c.s.State())}, nil
}

// Listing describes st for a model or a person: one line a job, and the
// wakeup.
func Listing(st State) string {
	var b strings.Builder
	if len(st.Jobs) == 0 {
		b.WriteString("No cron jobs.")
	}
	for i, j := range st.Jobs {
		if i > 0 {
			b.WriteByte('\n')
		}
		what := "recurring"
		if !j.Recurring {
			what = "one-shot"
		}
		fmt.Fprintf(&b, "%s  %s  %s  next %s  %s", j.ID, j.Cron, what, j.next().Format("2006-01-02 15:04"), oneLine(j.Prompt))
	}
	if w := st.Wakeup; w != nil {
		fmt.Fprintf(&b, "\nWakeup at %s (%s): %s", w.At.Format("2006-01-02 15:04:05"), w.Reason, oneLine(w.Prompt))
	}
	return b.String()
}

// oneLine shortens a prompt to one line of at most 80 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}

func (*cronDelete) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: NameCronDelete, InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"The job id CronCreate returned (CronList shows them)."}},"required":["id"],"additionalProperties":false}`),
		Description: "Deletes a cron job of this session by its id: it fires no more."}
}

func (*cronDelete) ReadOnly(json.RawMessage) bool { return false }

func (c *cronDelete) Run(_ context.Context, call tool.Call) (tool.Result, error) {
	var in struct {
		ID string `json:"id"`
	}
	if r, ok := tool.Decode(NameCronDelete, call.Input, &in); !ok {
		return r, nil
	}
	j, err := c.s.Delete(strings.TrimSpace(in.ID))
	if errors.Is(err, ErrNotFound) {
		return tool.Errorf("%s: no job %q (CronList shows the jobs)", NameCronDelete, in.ID), nil
	}
	if err != nil {
		return tool.Errorf("%s: %v", NameCronDelete, err), nil
	}
	return tool.Result{Content: fmt.Sprintf("Deleted job %s (%s).", j.ID, j.Cron)}, nil
}

const wakeupSchema = `{"type":"object","properties":{` +
	`"delaySeconds":{"type":"number","description":"Seconds from now to wake, %d to %d."},` +
	`"reason":{"type":"string","description":"One short sentence: why this delay (shown to the user)."},` +
	`"prompt":{"type":"string","description":"The prompt to run when you wake: pass the /loop prompt back each time."},` +
	`"stop":{"type":"boolean","description":"true: cancel the pending wakeup and end the loop (delaySeconds and prompt are then not needed)."}` +
	`},"additionalProperties":false}`

func (w *scheduleWakeup) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: NameScheduleWakeup, InputSchema: json.RawMessage(fmt.Sprintf(wakeupSchema, int(w.s.cfg.MinDelay/time.Second), int(MaxDelay/time.Second))),
		Description: "Schedules when to resume work in a self-paced /loop (the user asked to repeat a task without an interval): the prompt comes back to you as input after delaySeconds.\n" +
			"- One wakeup is pending at a time; a new call replaces it. Call with stop true to end the loop, or simply do not call it again.\n" +
			"- Do not wake early to poll background work you started: its end reaches you by itself. Pick a delay matched to how fast the thing you wait for changes; under 300 s keeps the prompt cache warm."}
}

func (*scheduleWakeup) ReadOnly(json.RawMessage) bool { return false }

func (w *scheduleWakeup) Run(_ context.Context, call tool.Call) (tool.Result, error) {
	var in struct {
		DelaySeconds *float64 `json:"delaySeconds"`
		Reason       string   `json:"reason"`
		Prompt       string   `json:"prompt"`
		Stop         bool     `json:"stop"`
	}
	if r, ok := tool.Decode(NameScheduleWakeup, call.Input, &in); !ok {
		return r, nil
	}
	if in.Stop {
		if _, ok := w.s.CancelWakeup(); !ok {
			return tool.Result{Content: "No wakeup was pending; the loop is over."}, nil
		}
		return tool.Result{Content: "Cancelled the pending wakeup; the loop is over."}, nil
	}
	if in.DelaySeconds == nil {
		return tool.Errorf("%s: delaySeconds is missing: want %d to %d seconds (or stop true)", NameScheduleWakeup, int(w.s.cfg.MinDelay/time.Second), int(MaxDelay/time.Second)), nil
	}
	d := time.Duration(*in.DelaySeconds * float64(time.Second))
	wk, err := w.s.Wake(d, in.Reason, in.Prompt)
	if err != nil {
		return tool.Errorf("%s: %v", NameScheduleWakeup, err), nil
	}
	return tool.Result{Content: fmt.Sprintf("Will wake at %s (in %s).", wk.At.Format("15:04:05"), d.Round(time.Second))}, nil
}
