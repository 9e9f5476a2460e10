package tui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/troupe-dev/troupe/tasklist"
)

// The board lists the team's tasks (id, state, owner, blocked-by, age),
// re-reads them on each tick while open so a claim shows, opens a task's
// description with Enter, and is left with Esc; /tasks stays the
// background-work list.
func TestBoard(t *testing.T) {
	m, _ := newTest(t)
	teammates(m)
	var mu sync.Mutex
	tasks := []tasklist.Task{
		{ID: "1", Subject: "Write the parser", Description: "Parse **every** line.\nKeep the errors.", Status: tasklist.StatusPending, Blocks: []string{"2"}},
		{ID: "2", Subject: "Test the parser", Status: tasklist.StatusPending, BlockedBy: []string{"1"}},
		{ID: "3", Subject: "Docs", Status: tasklist.StatusCompleted, Owner: "carol"},
	}
	m.opts.Board = func(context.Context) (string, []tasklist.Task, error) {
		mu.Lock()
		defer mu.Unlock()
		return "web", append([]tasklist.Task(nil), tasks...), nil
	}
	press(m, "ctrl+t")
	golden(t, m, "board")
	mu.Lock()
	tasks[0].Status, tasks[0].Owner = tasklist.StatusInProgress, "alice"
	mu.Unlock()
	_, cmd := m.Update(tickMsg(t0.Add(5 * time.Second)))
	for _, msg := range batch(cmd) {
		m.Update(msg)
	}
	frame := ansi.Strip(m.frame())
	if !strings.Contains(frame, "#1    ● in_progress alice") {
		t.Errorf("the claim is not on the board after a tick:\n%s", frame)
	}
	if !strings.Contains(frame, "#2    ⊘ blocked") || !strings.Contains(frame, "blocked by #1") {
		t.Errorf("task 2 is not shown blocked by #1:\n%s", frame)
	}
	press(m, "enter")
	frame = ansi.Strip(m.frame())
	for _, want := range []string{"#1 Write the parser", "state: in_progress, alice", "blocks: #2", "Parse every line.", "seen on the board:"} {
		if !strings.Contains(frame, want) {
			t.Errorf("the task's page lacks %q:\n%s", want, frame)
		}
	}
	press(m, "esc", "esc")
	if m.screen != screenMain {
		t.Errorf("Esc twice: screen %d; want the conversation", m.screen)
	}
	press(m, "/board", "enter")
	if m.screen != screenBoard {
		t.Errorf("/board: screen %d", m.screen)
	}
}

// batch runs cmd, and each command of a tea.Batch, and returns the
// messages they produce.
func batch(cmd tea.Cmd) []tea.Msg {
	msg := run(cmd)
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, batch(c)...)
		}
		return out
	}
	if msg == nil {
		return nil
	}
	return []tea.Msg{msg}
}
