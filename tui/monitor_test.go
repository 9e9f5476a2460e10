package tui

import (
	"slices"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/session"
	"github.com/troupe-dev/troupe/task"
)

// TestMonitorPillAndLine: a running monitor is the "1 monitor" pill (its
// own shell is not a shell pill), and a monitor's wake is a line in the
// conversation and its last line on the task.
func TestMonitorPillAndLine(t *testing.T) {
	m, _ := newTest(t)
	mon := task.State{ID: "m00000001", Type: task.MonitorMCP, Status: task.Running, Start: t0, Description: "dev server",
		Detail: &task.Monitor{Source: "command", Shell: "b00000001"}}
	sh := task.State{ID: "b00000001", Type: task.LocalBash, Status: task.Running, Start: t0, Description: "dev server",
		Detail: &task.Shell{Command: "npm run dev", Kind: "monitor"}}
	other := task.State{ID: "b00000002", Type: task.LocalBash, Status: task.Running, Start: t0, Description: "build",
		Detail: &task.Shell{Command: "make"}}
	for _, st := range []task.State{mon, sh, other} {
		ev(m, session.Event{Kind: session.KindTaskStarted, Task: &task.Event{Kind: task.EventStarted, State: st}})
	}
	if got, want := m.pills(), []string{"1 shell", "1 monitor"}; !slices.Equal(got, want) {
		t.Errorf("pills %q, want %q", got, want)
	}
	woke := mon
	woke.Detail = &task.Monitor{Source: "command", LastLine: "Error: EADDRINUSE", Wakes: 1}
	ev(m, session.Event{Kind: session.KindTaskMonitor, Task: &task.Event{Kind: task.EventMonitor, State: woke, Summary: `Monitor "dev server": 1 new matching line`}})
	last := m.convo.entries[len(m.convo.entries)-1]
	if !strings.Contains(last.text, `m00000001 Monitor "dev server": 1 new matching line`) {
		t.Errorf("conversation line %q", last.text)
	}
	if tv := m.tasks["m00000001"]; tv.tail != "Error: EADDRINUSE" {
		t.Errorf("task tail %q", tv.tail)
	}
	m.viewTask = "m00000001"
	screen := strings.Join(m.taskScreen(20), "\n")
	for _, want := range []string{"watching command", "1 wake", "Error: EADDRINUSE"} {
		if !strings.Contains(screen, want) {
			t.Errorf("task screen lacks %q:\n%s", want, screen)
		}
	}
}
