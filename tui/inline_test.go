package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/session"
)

// Without the alternate screen the program is told so (the view), each
// settled entry is queued for the scrollback once and in order, and the
// frame shows only the answer still streaming above the prompt.
func TestNoAltScreen(t *testing.T) {
	r := &recorder{}
	m := newModel(context.Background(), r, Options{NoColor: true, NoAltScreen: true, Now: func() time.Time { return t0 }})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if v := m.View(); v.AltScreen || v.MouseMode != tea.MouseModeNone {
		t.Fatalf("NoAltScreen: view AltScreen %v, MouseMode %v", v.AltScreen, v.MouseMode)
	}
	if alt, _ := newTest(t); !alt.View().AltScreen {
		t.Fatal("by default the view is not on the alternate screen")
	}

	press(m, "first question", "enter")
	ev(m, session.Event{Kind: session.KindTurnStarted, Text: "first question"})
	agentEv(m, agent.Event{Type: agent.EventDelta, Text: "streaming ans"})
	printed := m.printer.take()
	if len(printed) != 1 || !strings.Contains(printed[0], "first question") {
		t.Fatalf("printed %q, want the prompt", printed)
	}
	frame := ansi.Strip(m.frame())
	if strings.Contains(frame, "first question") || !strings.Contains(frame, "streaming ans") {
		t.Errorf("the frame shows the printed prompt or lacks the stream:\n%s", frame)
	}
	if n := strings.Count(frame, "\n") + 1; n >= 24 {
		t.Errorf("the inline frame is %d lines, the whole screen", n)
	}

	agentEv(m, agent.Event{Type: agent.EventDelta, Text: "wer"})
	if p := m.printer.take(); len(p) != 0 {
		t.Errorf("printed %q while the answer streams", p)
	}
	ev(m, session.Event{Kind: session.KindTurnEnded})
	printed = m.printer.take()
	if len(printed) != 1 || !strings.Contains(printed[0], "streaming answer") {
		t.Errorf("printed %q, want the answer once", printed)
	}
	press(m, "/model", "enter")
	if p := m.printer.take(); len(p) != 1 || !strings.Contains(p[0], "Model:") {
		t.Errorf("printed %q, want the /model notice", p)
	}
	if p := m.printer.take(); len(p) != 0 {
		t.Errorf("printed again: %q", p)
	}
}
