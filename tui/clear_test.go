package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/session"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
)

// realSession is an interactive session with a scripted lead that
// answers "ok", its factory building leads on Model as the troupe
// command's does, and a subscription to its events.
func realSession(t *testing.T) (*session.Session, *session.Subscription) {
	t.Helper()
	sc, err := scripted.Parse([]byte(`{"turns":[{"match":{},"reply":{"text":"ok"},"repeat":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	model := scripted.New(sc)
	reg := task.New(task.Config{Dir: t.TempDir()})
	s, err := session.New(session.Config{Registry: reg, Interactive: true})
	if err != nil {
		t.Fatal(err)
	}
	tools, _ := tool.NewRegistry()
	factory := func(history []llm.Message, observe func(agent.Event) bool) (*agent.Agent, error) {
		return agent.New(agent.Config{Model: model, ModelName: s.Model(), Tools: tools, History: history,
			OnEvent: func(e agent.Event) { observe(e) }})
	}
	if _, err := s.StartLead(factory, nil); err != nil {
		t.Fatal(err)
	}
	sub := s.Subscribe(false)
	t.Cleanup(func() {
		s.Lead().Kill()
		s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		reg.Close(ctx)
	})
	return s, sub
}

// until hands the model the session's events up to one of kind.
func until(t *testing.T, m *model, sub *session.Subscription, kind session.Kind) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for %s: %v", kind, err)
		}
		m.Update(eventMsg{e})
		if e.Kind == kind {
			return
		}
	}
}

// /clear starts a fresh conversation: the lead has no history, the
// screen shows only the notice. /model names and switches the model.
func TestClearAndModel(t *testing.T) {
	s, sub := realSession(t)
	m := newModel(context.Background(), s, Options{NoColor: true, Model: "claude-opus-4-5", Now: func() time.Time { return t0 }})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(m, "first question", "enter")
	until(t, m, sub, session.KindTurnEnded)
	if frame := ansi.Strip(m.frame()); !strings.Contains(frame, "first question") {
		t.Fatalf("the turn is not on screen:\n%s", frame)
	}

	press(m, "/clear", "enter")
	until(t, m, sub, session.KindCleared)
	frame := ansi.Strip(m.frame())
	if strings.Contains(frame, "first question") || !strings.Contains(frame, "A fresh conversation") {
		t.Errorf("after /clear:\n%s", frame)
	}
	if n := len(s.Lead().Messages()); n != 0 {
		t.Errorf("after /clear the lead has %d messages", n)
	}

	press(m, "/model", "enter")
	if frame := ansi.Strip(m.frame()); !strings.Contains(frame, "Model: claude-opus-4-5") {
		t.Errorf("/model does not name the model:\n%s", frame)
	}
	press(m, "/model two words", "enter")
	if frame := ansi.Strip(m.frame()); !strings.Contains(frame, "a model name is one word") || s.Model() != "" {
		t.Errorf("/model two words: Model() %q\n%s", s.Model(), frame)
	}
	press(m, "/model claude-haiku-4-5", "enter")
	until(t, m, sub, session.KindModel)
	if frame := ansi.Strip(m.frame()); !strings.Contains(frame, "Model: claude-haiku-4-5 from the lead's next turn") || s.Model() != "claude-haiku-4-5" {
		t.Errorf("/model claude-haiku-4-5: Model() %q\n%s", s.Model(), frame)
	}
	press(m, "/model", "enter")
	if frame := ansi.Strip(m.frame()); !strings.Contains(frame, "Model: claude-haiku-4-5 (/model NAME") {
		t.Errorf("/model after the switch:\n%s", frame)
	}
}
