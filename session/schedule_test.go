package session

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/schedule"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
)

// newSchedule gives s a started schedule whose wakeups may be short.
func newSchedule(t *testing.T, s *Session, maxFirings int) *schedule.Schedule {
	t.Helper()
	sc, err := schedule.New(schedule.Config{Fire: s.Scheduled, Save: s.ScheduleChanged, MinDelay: time.Millisecond, MaxFirings: maxFirings}, schedule.State{})
	if err != nil {
		t.Fatal(err)
	}
	s.SetSchedule(sc)
	if err := sc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sc.Close)
	return sc
}

// A headless Run stays up while a wakeup is pending, takes its firing as
// input (wrapped, and reported as a KindScheduled event), and ends when
// nothing more is scheduled.
func TestRunWaitsForWakeup(t *testing.T) {
	s, sub := newSession(t, `{"turns":[
 {"match":{"user":"start"},"reply":{"text":"set"}},
 {"match":{"user":"SCHEDULED WAKEUP"},"reply":{"text":"woke"}}
]}`)
	sc := newSchedule(t, s, 0)
	if _, err := sc.Wake(300*time.Millisecond, "testing", "look again"); err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background(), "start")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "woke" {
		t.Fatalf("Run's text = %q; want %q (the run ended before the wakeup)", res.Text, "woke")
	}
	e, _ := next(t, sub, KindScheduled)
	if e.Firing == nil || e.Firing.Kind != schedule.KindWakeup || !strings.Contains(e.Text, "look again") {
		t.Fatalf("KindScheduled event = %+v; want the wakeup's", e)
	}
	msgs := s.Lead().Messages()
	var found bool
	for _, m := range msgs {
		for _, b := range m.Content {
			if strings.Contains(b.Text, "<scheduled-task") && strings.Contains(b.Text, "look again") {
				found = true
			}
		}
	}
	if !found {
		t.Fatalf("the lead's conversation has no <scheduled-task> input: %+v", msgs)
	}
}

// A firing that comes due while the lead is in a turn waits for the
// turn's end; it never enters the turn.
func TestFiringHeldDuringTurn(t *testing.T) {
	s, sub := newSession(t, `{"turns":[
 {"match":{"user":"slow"},"reply":{"delay_ms":400,"text":"done slow"}},
 {"match":{"user":"SCHEDULED TASK"},"reply":{"text":"handled"}}
]}`)
	ctx := context.Background()
	s.Submit(ctx, "slow")
	next(t, sub, KindTurnStarted)
	time.Sleep(50 * time.Millisecond) // the turn is under way
	s.Scheduled(schedule.Firing{Kind: schedule.KindCron, JobID: "j1", Cron: "* * * * *", Prompt: "ping"})
	ev, seen := next(t, sub, KindScheduled)
	var text bool
	for _, e := range seen {
		if e.Kind == KindText && e.Agent != nil && e.Agent.Message != nil && strings.Contains(e.Agent.Message.Content[0].Text, "done slow") {
			text = true
		}
	}
	if !text {
		t.Fatalf("the firing was reported before the turn's answer; events before it: %d", len(seen))
	}
	if ev.Firing.JobID != "j1" || ev.Text != "⏰ scheduled j1: ping" {
		t.Fatalf("KindScheduled = %+v; want job j1's", ev)
	}
	end, _ := next(t, sub, KindTurnEnded)
	if end.Result == nil || end.Result.Text != "handled" {
		t.Fatalf("the run ended with %+v; want the firing answered in it", end.Result)
	}
}

// --max-wakeups: a self-paced loop (the model re-arms ScheduleWakeup
// at each firing) ends after the firings allowed.
func TestRunEndsAtMaxFirings(t *testing.T) {
	sc, err := scripted.Parse([]byte(`{"turns":[
 {"match":{"user":"start"},"reply":{"tool_calls":[{"name":"ScheduleWakeup","input":{"delaySeconds":0.05,"reason":"loop","prompt":"tick"}}]}},
 {"match":{"tool_result":"ScheduleWakeup"},"reply":{"text":"armed"},"repeat":true},
 {"match":{"user":"SCHEDULED WAKEUP"},"reply":{"tool_calls":[{"name":"ScheduleWakeup","input":{"delaySeconds":0.05,"reason":"loop","prompt":"tick"}}]},"repeat":true}
]}`))
	if err != nil {
		t.Fatal(err)
	}
	reg := task.New(task.Config{Dir: t.TempDir()})
	s, err := New(Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	sched := newSchedule(t, s, 2)
	tools, _ := tool.NewRegistry(sched.Tools()...)
	ag, err := agent.New(agent.Config{Model: scripted.New(sc), System: "lead", Tools: tools, OnEvent: s.Observe})
	if err != nil {
		t.Fatal(err)
	}
	s.SetLead(ag)
	sub := s.Subscribe(false)
	t.Cleanup(func() {
		ag.Kill()
		s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		reg.Close(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := s.Run(ctx, "start")
	if err != nil {
		t.Fatal(err)
	}
	if n := sched.Fired(); n != 2 {
		t.Fatalf("Fired() = %d after the run; want 2", n)
	}
	if res.Text != "armed" {
		t.Fatalf("the run ended on %q; want the answer to the last firing", res.Text)
	}
	var n int
	for {
		e, ok := sub.TryNext()
		if !ok {
			break
		}
		if e.Kind == KindScheduled {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d KindScheduled events; want 2", n)
	}
}
