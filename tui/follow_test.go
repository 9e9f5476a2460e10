package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/session"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/transcript"
)

// While the person reads back, a streaming answer never moves the view:
// the top line stays, a marker counts the new lines, and End (or G on an
// empty prompt) follows the end again.
func TestScrollHoldsWhileStreaming(t *testing.T) {
	m, _ := newTest(t)
	ev(m, session.Event{Kind: session.KindTurnStarted, Text: "go"})
	for i := range 100 {
		agentEv(m, agent.Event{Type: agent.EventDelta, Text: fmt.Sprintf("streamed line %03d\n", i)})
	}
	press(m, "pgup")
	top := strings.Split(m.frame(), "\n")[0]
	for i := 100; i < 140; i++ {
		agentEv(m, agent.Event{Type: agent.EventDelta, Text: fmt.Sprintf("streamed line %03d\n", i)})
		f := strings.Split(m.frame(), "\n")
		if f[0] != top {
			t.Fatalf("after line %d streamed, the top line is %q; want %q still", i, f[0], top)
		}
	}
	frame := ansi.Strip(m.frame())
	if !strings.Contains(frame, "↓ 40 new lines, End to follow") {
		t.Errorf("no marker of 40 new lines:\n%s", frame)
	}
	press(m, "pgup", "pgup", "pgdown")
	if f := ansi.Strip(m.frame()); strings.Split(f, "\n")[0] == top {
		t.Errorf("PgUp twice and PgDn once did not move the view")
	}
	press(m, "end")
	if f := ansi.Strip(m.frame()); !strings.Contains(f, "streamed line 139") || strings.Contains(f, "End to follow") {
		t.Errorf("End on an empty prompt does not follow the end:\n%s", f)
	}
	press(m, "ctrl+home")
	if f := ansi.Strip(m.frame()); !strings.Contains(f, "> go") && !strings.Contains(f, "streamed line 000") {
		t.Errorf("Ctrl+Home does not show the start:\n%s", f)
	}
	press(m, "G")
	if m.convo.top != nil || m.input.Value() != "" {
		t.Errorf("G on an empty prompt while scrolled back: top %v, prompt %q", m.convo.top, m.input.Value())
	}
	press(m, "G")
	if m.input.Value() != "G" {
		t.Errorf("G while following is a letter: prompt %q", m.input.Value())
	}
}

// The teammate view scrolls too, and its transcript's new lines do not
// move it.
func TestTeammateViewScrolls(t *testing.T) {
	m, _ := newTest(t)
	var lines []transcript.Line
	for i := range 80 {
		lines = append(lines, transcript.Line{Type: agent.EventAssistant, Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text(fmt.Sprintf("alice says %03d", i))}}})
	}
	m.opts.Transcript = func(string, int64) ([]transcript.Line, int64, error) { return nil, 0, nil }
	teammates(m)
	press(m, "shift+down", "enter")
	m.Update(transcriptMsg{name: "alice", lines: lines[:40], next: 1})
	press(m, "pgup")
	before := m.frame()
	m.Update(transcriptMsg{name: "alice", lines: lines[40:], next: 2})
	after := m.frame()
	if strings.Split(before, "\n")[8] != strings.Split(after, "\n")[8] {
		t.Errorf("new transcript lines moved the scrolled view:\n%s\n---\n%s", before, after)
	}
	if !strings.Contains(ansi.Strip(after), "new lines, End to follow") {
		t.Errorf("no new-lines marker in the teammate view:\n%s", after)
	}
	press(m, "ctrl+end")
	if f := ansi.Strip(m.frame()); !strings.Contains(f, "alice says 079") {
		t.Errorf("Ctrl+End does not show alice's latest words:\n%s", f)
	}
}

// A task's detail scrolls: a 100-line result is read to its end.
func TestTaskDetailScrolls(t *testing.T) {
	m, _ := newTest(t)
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "result line %03d\n", i)
	}
	st := task.State{ID: "a00000001", Type: task.LocalAgent, Status: task.Completed, Start: t0, End: t0, Description: "review",
		Detail: &task.Agent{Prompt: "review it", Result: b.String()}}
	ev(m, session.Event{Kind: session.KindTaskEnded, Task: &task.Event{Kind: task.EventTerminated, State: st}})
	press(m, "/tasks", "enter", "enter")
	if m.screen != screenTask {
		t.Fatalf("screen %d; want the task's detail", m.screen)
	}
	if f := m.frame(); strings.Contains(f, "result line 099") || !strings.Contains(f, "more lines below") {
		t.Fatalf("the whole result fits, or no marker says more is below:\n%s", f)
	}
	for range 10 {
		press(m, "pgdown")
	}
	if f := m.frame(); !strings.Contains(f, "result line 099") || !strings.Contains(f, "a00000001") {
		t.Errorf("PgDn does not reach the result's end with the head kept:\n%s", f)
	}
}

// Scrolling an emptied or shrunk conversation neither panics nor sticks.
func TestScrollEdges(t *testing.T) {
	m, _ := newTest(t)
	for i := range 50 {
		m.convo.add(entry{kind: entryNotice, text: fmt.Sprint("note ", i)})
	}
	m.frame()
	m.convo.scroll(m.st, 10, m.now)
	m.convo.drop(50)
	m.convo.scroll(m.st, 5, m.now)
	m.convo.scroll(m.st, -5, m.now)
	if f := m.frame(); strings.Contains(f, "End to follow") {
		t.Errorf("an empty conversation shows a scroll marker:\n%s", f)
	}
	for i := range 50 {
		m.convo.add(entry{kind: entryNotice, text: fmt.Sprint("again ", i)})
	}
	m.frame()
	m.convo.scroll(m.st, 1000, m.now)
	if f := ansi.Strip(m.frame()); !strings.Contains(f, "again 0") {
		t.Errorf("scrolling far past the top does not stop at the first line:\n%s", f)
	}
	m.convo.scroll(m.st, -1000, m.now)
	if m.convo.top != nil {
		m.frame()
	}
	if m.convo.top != nil {
		t.Errorf("scrolling far past the end does not follow it again")
	}
}
