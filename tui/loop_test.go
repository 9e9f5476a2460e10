package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/schedule"
	"github.com/troupe-dev/troupe/session"
)

// The footer shows the schedule's next wake from its events, a firing is
// an input line marked as scheduled, and /loop without a schedule says
// so.
func TestLoopFooterAndFiring(t *testing.T) {
	m, _ := newTest(t)
	if strings.Contains(m.frame(), "next wake") {
		t.Fatal("the footer shows a next wake with nothing scheduled")
	}
	at := t0.Add(90 * time.Minute)
	ev(m, session.Event{Kind: session.KindSchedule, Schedule: &schedule.State{Wakeup: &schedule.Wakeup{At: at, Prompt: "p", Set: t0}}})
	if want := "next wake " + at.Local().Format("15:04"); !strings.Contains(m.frame(), want) {
		t.Fatalf("the footer lacks %q:\n%s", want, m.frame())
	}
	f := schedule.Firing{Kind: schedule.KindWakeup, Prompt: "poll the deploy"}
	ev(m, session.Event{Kind: session.KindScheduled, Text: f.Label(), Firing: &f})
	ev(m, session.Event{Kind: session.KindSchedule, Schedule: &schedule.State{}})
	frame := m.frame()
	if !strings.Contains(frame, "⏰ wakeup: poll the deploy") || strings.Contains(frame, "next wake") {
		t.Fatalf("after the firing: want its scheduled input line and no next wake:\n%s", frame)
	}
	m.input.SetValue("/loop 10m check")
	if msg := run(m.submit()); msg != nil {
		t.Fatalf("/loop on a driver without a schedule returned %v", msg)
	}
	if !strings.Contains(m.frame(), "/loop: this session has no schedule") {
		t.Fatalf("/loop without a schedule does not say so:\n%s", m.frame())
	}
}
