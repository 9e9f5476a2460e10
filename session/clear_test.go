package session

import (
	"context"
	"errors"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
)

// seenModels is an llm.Model that records each request's model name and
// the number of messages it carried.
type seenModels struct {
	llm.Model
	mu    sync.Mutex
	names []string
	sizes []int
}

func (m *seenModels) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	m.mu.Lock()
	m.names = append(m.names, req.Model)
	m.sizes = append(m.sizes, len(req.Messages))
	m.mu.Unlock()
	return m.Model.Stream(ctx, req)
}

func (m *seenModels) last() (string, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.names[len(m.names)-1], m.sizes[len(m.sizes)-1]
}

// newSwappable is an interactive session whose lead factory builds leads
// on Model, as the troupe command's does.
func newSwappable(t *testing.T, script string) (*Session, *Subscription, *seenModels) {
	t.Helper()
	sc, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	model := &seenModels{Model: scripted.New(sc)}
	reg := task.New(task.Config{Dir: t.TempDir()})
	s, err := New(Config{Registry: reg, Interactive: true})
	if err != nil {
		t.Fatal(err)
	}
	tools, _ := tool.NewRegistry()
	var mu sync.Mutex
	var made []*agent.Agent
	factory := func(history []llm.Message, observe func(agent.Event) bool) (*agent.Agent, error) {
		ag, err := agent.New(agent.Config{Model: model, ModelName: s.Model(), System: "lead", Tools: tools, History: history,
			OnEvent: func(e agent.Event) { observe(e) }})
		mu.Lock()
		made = append(made, ag)
		mu.Unlock()
		return ag, err
	}
	if _, err := s.StartLead(factory, nil); err != nil {
		t.Fatal(err)
	}
	sub := s.Subscribe(false)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { defer close(served); s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-served
		mu.Lock()
		for _, ag := range made {
			ag.Kill()
		}
		mu.Unlock()
		s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		reg.Close(ctx)
	})
	return s, sub, model
}

const swapScript = `{"turns":[
 {"match":{"user":"slow"},"reply":{"delay_ms":60000,"text":"never"}},
 {"match":{},"reply":{"text":"ok"},"repeat":true}
]}`

// Clear drops the conversation: the next turn's request carries only its
// prompt, input waiting for the old lead reaches the new one, and a
// working lead refuses.
func TestClear(t *testing.T) {
	s, sub, model := newSwappable(t, swapScript)
	ctx := context.Background()
	for _, p := range []string{"one", "two"} {
		s.Submit(ctx, p)
		next(t, sub, KindTurnEnded)
	}
	old := s.Lead()
	if n := len(old.Messages()); n != 4 {
		t.Fatalf("before Clear: %d messages, want 4", n)
	}
	if err := s.Clear(); err != nil {
		t.Fatal(err)
	}
	next(t, sub, KindCleared)
	if s.Lead() == old || len(s.Lead().Messages()) != 0 {
		t.Fatalf("after Clear: the same lead or %d messages", len(s.Lead().Messages()))
	}
	s.Submit(ctx, "three")
	next(t, sub, KindTurnEnded)
	if _, n := model.last(); n != 1 {
		t.Errorf("the turn after Clear sent %d messages, want 1 (its prompt)", n)
	}

	s.Submit(ctx, "slow")
	waitUser(t, sub)
	if err := s.Clear(); !errors.Is(err, ErrBusy) {
		t.Errorf("Clear while the lead works: %v, want ErrBusy", err)
	}
	s.Interrupt()
	next(t, sub, KindTurnEnded)
}

// Clear hands the old lead's waiting input to the new one.
func TestClearKeepsInput(t *testing.T) {
	s, sub, _ := newSwappable(t, swapScript)
	// Input waiting for the idle lead, not yet taken up (no signal to
	// Serve, as Deliver would send).
	s.Lead().Send("a teammate's message")
	if err := s.Clear(); err != nil {
		t.Fatal(err)
	}
	// Serve starts a run for it on the new lead.
	e, _ := next(t, sub, KindTurnEnded)
	if e.Err != nil {
		t.Fatal(e.Err)
	}
	msgs := s.Lead().Messages()
	if len(msgs) != 2 || msgs[0].Text() != "a teammate's message" {
		t.Errorf("the new lead's conversation: %+v", msgs)
	}
}

// SetModel switches the model of the next turn and keeps the
// conversation; a bad name or a working lead is refused.
func TestSetModel(t *testing.T) {
	s, sub, model := newSwappable(t, swapScript)
	ctx := context.Background()
	s.Submit(ctx, "one")
	next(t, sub, KindTurnEnded)
	if name, _ := model.last(); name != "" || s.Model() != "" {
		t.Fatalf("first turn's model %q, Model() %q, want none", name, s.Model())
	}
	for _, bad := range []string{"", "two words", " padded"} {
		if err := s.SetModel(bad); err == nil {
			t.Errorf("SetModel(%q) accepted", bad)
		}
	}
	if err := s.SetModel("claude-haiku-4-5"); err != nil {
		t.Fatal(err)
	}
	e, _ := next(t, sub, KindModel)
	if e.Text != "claude-haiku-4-5" || s.Model() != "claude-haiku-4-5" {
		t.Errorf("event %q, Model() %q", e.Text, s.Model())
	}
	s.Submit(ctx, "two")
	next(t, sub, KindTurnEnded)
	if name, n := model.last(); name != "claude-haiku-4-5" || n != 3 {
		t.Errorf("next turn: model %q with %d messages, want claude-haiku-4-5 with 3", name, n)
	}

	s.Submit(ctx, "slow")
	waitUser(t, sub)
	if err := s.SetModel("other"); !errors.Is(err, ErrBusy) || s.Model() != "claude-haiku-4-5" {
		t.Errorf("SetModel while the lead works: %v, Model() %q", err, s.Model())
	}
	s.Interrupt()
	next(t, sub, KindTurnEnded)
}
