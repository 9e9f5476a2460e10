package session

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
)

// newInteractive returns an interactive session whose leads (the first,
// and those Background makes) run script, served until the test ends.
func newInteractive(t *testing.T, script string) (*Session, *Subscription) {
	t.Helper()
	return newInteractiveAt(t, script, nil)
}

// newInteractiveAt is newInteractive with the session's clock now.
func newInteractiveAt(t *testing.T, script string, now func() time.Time) (*Session, *Subscription) {
	t.Helper()
	sc, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	model := scripted.New(sc)
	reg := task.New(task.Config{Dir: t.TempDir()})
	s, err := New(Config{Registry: reg, Interactive: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	tools, _ := tool.NewRegistry()
	var made []*agent.Agent
	factory := func(history []llm.Message, observe func(agent.Event) bool) (*agent.Agent, error) {
		ag, err := agent.New(agent.Config{Model: model, System: "lead", Tools: tools, History: history,
			OnEvent: func(e agent.Event) { observe(e) }})
		made = append(made, ag)
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
		for _, ag := range made {
			ag.Kill()
		}
		s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		reg.Close(ctx)
	})
	return s, sub
}

// waitUser waits until the foreground lead's prompt reached its agent.
func waitUser(t *testing.T, sub *Subscription) {
	t.Helper()
	for e, _ := next(t, sub, KindAgent); e.Agent.Type != agent.EventUser || e.TaskID != ""; e, _ = next(t, sub, KindAgent) {
	}
}

// A long turn backgrounded: the prompt is free at once, a fresh lead
// answers the next one from the conversation before the long turn, the
// long turn's task ends with its answer and notifies the lead, and
// Foreground brings the long turn's conversation back.
func TestBackgroundAndForeground(t *testing.T) {
	s, sub := newInteractive(t, `{"turns":[
 {"match":{"user":"first"},"reply":{"text":"ONE"}},
 {"match":{"user":"long"},"reply":{"delay_ms":400,"text":"LONG DONE"}},
 {"match":{"user":"quick"},"reply":{"text":"QUICK"}},
 {"match":{"user":"SYSTEM NOTIFICATION"},"reply":{"text":"NOTED"}},
 {"match":{"user":"where"},"reply":{"text":"HERE"}}
]}`)
	ctx := context.Background()
	if _, err := s.Background(ctx); err != ErrNotWorking {
		t.Fatalf("Background of an idle lead: %v, want ErrNotWorking", err)
	}
	s.Submit(ctx, "first")
	next(t, sub, KindTurnEnded)
	s.Submit(ctx, "long")
	waitUser(t, sub)
	id, err := s.Background(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bg, _ := next(t, sub, KindBackgrounded)
	if bg.TaskID != string(id) || bg.Text != "long" {
		t.Errorf("backgrounded event %+v", bg)
	}
	st, _ := s.Registry().Get(id)
	if d, ok := st.Detail.(*task.Agent); st.Type != task.LocalAgent || !ok || d.AgentType != MainSession || !st.Status.Active() {
		t.Fatalf("the backgrounded turn's task: %+v", st)
	}
	// The prompt is free: a fresh lead answers, knowing the conversation
	// before the long turn and not the long turn.
	s.Submit(ctx, "quick")
	started, _ := next(t, sub, KindTurnStarted)
	if started.Text != "quick" {
		t.Fatalf("the next turn started with %q", started.Text)
	}
	ended, _ := next(t, sub, KindTurnEnded)
	if ended.Result == nil || ended.Result.Text != "QUICK" {
		t.Fatalf("the turn after backgrounding: %+v %v", ended.Result, ended.Err)
	}
	lead := s.leadAgent()
	var texts []string
	for _, m := range lead.Messages() {
		texts = append(texts, m.Text())
	}
	if got := strings.Join(texts, "|"); !strings.Contains(got, "ONE") || strings.Contains(got, "long") {
		t.Errorf("the fresh lead's conversation: %s", got)
	}
	// The long turn ends in its task, whose notification starts a run of
	// the foreground lead.
	e, _ := next(t, sub, KindTaskEnded)
	if e.Task.State.ID != id || e.Task.State.Status != task.Completed {
		t.Fatalf("task end %+v", e.Task.State)
	}
	if d, _ := task.DetailAs[*task.Agent](e.Task.State); d == nil || d.Result != "LONG DONE" {
		t.Errorf("the backgrounded turn's result: %+v", d)
	}
	ended, _ = next(t, sub, KindTurnEnded)
	if ended.Result == nil || ended.Result.Text != "NOTED" {
		t.Fatalf("the notification's run: %+v %v", ended.Result, ended.Err)
	}

	// Foreground: the long turn's conversation is the lead's again; the
	// one that worked meanwhile is set aside, not lost.
	if err := s.Foreground(ctx, id); err != nil {
		t.Fatal(err)
	}
	if fg, _ := next(t, sub, KindForegrounded); fg.TaskID != string(id) {
		t.Errorf("foregrounded %+v", fg)
	}
	texts = texts[:0]
	for _, m := range s.leadAgent().Messages() {
		texts = append(texts, m.Text())
	}
	if got := strings.Join(texts, "|"); !strings.Contains(got, "LONG DONE") || strings.Contains(got, "QUICK") {
		t.Errorf("the foregrounded conversation: %s", got)
	}
	var aside task.ID
	for _, st := range s.Registry().List() {
		if d, ok := st.Detail.(*task.Agent); ok && d.AgentType == MainSession && st.ID != id {
			aside = st.ID
		}
	}
	if aside == "" {
		t.Fatal("the conversation set aside has no task")
	}
	s.Submit(ctx, "where")
	var seen []Event
	if ended, seen = next(t, sub, KindTurnEnded); ended.Result == nil || ended.Result.Text != "HERE" {
		for _, e := range seen {
			t.Logf("%s %q %+v", e.Kind, e.Text, e.Agent)
		}
		t.Fatalf("a turn of the foregrounded lead: %+v %v", ended.Result, ended.Err)
	}
	if err := s.Foreground(ctx, aside); err != nil {
		t.Fatalf("bring the set-aside conversation back: %v", err)
	}
	if err := s.Foreground(ctx, "b00000000"); err == nil {
		t.Error("Foreground of an unknown task: no error")
	}
}

// A backgrounded turn brought back while it still runs reports to the
// foreground again, and its end is the foreground's turn end; stopping a
// backgrounded turn interrupts it.
func TestForegroundRunningAndStop(t *testing.T) {
	s, sub := newInteractive(t, `{"turns":[
 {"match":{"user":"long"},"reply":{"delay_ms":500,"text":"LONG DONE"}},
 {"match":{"user":"forever"},"reply":{"delay_ms":60000,"text":"never"}}
]}`)
	ctx := context.Background()
	s.Submit(ctx, "long")
	waitUser(t, sub)
	id, err := s.Background(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Foreground(ctx, id); err != nil {
		t.Fatal(err)
	}
	ended, _ := next(t, sub, KindTurnEnded)
	if ended.Result == nil || ended.Result.Text != "LONG DONE" {
		t.Fatalf("the brought-back turn ended %+v %v", ended.Result, ended.Err)
	}
	if st, _ := s.Registry().Get(id); st.Status != task.Completed {
		t.Errorf("the task of a turn brought back: %s, want completed (quietly)", st.Status)
	}

	s.Submit(ctx, "forever")
	waitUser(t, sub)
	id, err = s.Background(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := s.Stop(sctx, string(id))
	if err != nil || st.Status != task.Killed {
		t.Fatalf("stop the backgrounded turn: %+v %v", st.Status, err)
	}
}

// Compact summarizes the idle lead's conversation; a working lead refuses.
func TestCompact(t *testing.T) {
	s, sub := newInteractive(t, `{"turns":[
 {"match":{"user":"Summarize the conversation so far"},"reply":{"text":"SUMMARY of four turns"}},
 {"match":{"user":"slow"},"reply":{"delay_ms":60000,"text":"never"}},
 {"match":{},"reply":{"text":"ok"},"repeat":true}
]}`)
	ctx := context.Background()
	for _, p := range []string{"one", "two", "three", "four", "five"} {
		s.Submit(ctx, p)
		next(t, sub, KindTurnEnded)
	}
	before := len(s.Lead().Messages())
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	e, _ := next(t, sub, KindCompact)
	if e.Agent == nil || !strings.Contains(e.Agent.Text, "SUMMARY") {
		t.Errorf("compact event %+v", e.Agent)
	}
	after := s.Lead().Messages()
	if len(after) >= before || !strings.Contains(after[0].Text(), "SUMMARY of four turns") {
		t.Errorf("after Compact: %d messages (before %d), first %q", len(after), before, after[0].Text())
	}
	s.Submit(ctx, "slow")
	waitUser(t, sub)
	if err := s.Compact(ctx); !errors.Is(err, ErrBusy) {
		t.Errorf("Compact while the lead works: %v, want ErrBusy", err)
	}
	s.Interrupt()
}
