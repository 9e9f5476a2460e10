package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
)

// newSession returns a session whose lead runs script, and a subscription
// to its events.
func newSession(t *testing.T, script string) (*Session, *Subscription) {
	t.Helper()
	sc, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	reg := task.New(task.Config{Dir: t.TempDir()})
	s, err := New(Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	tools, _ := tool.NewRegistry()
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
	return s, sub
}

// next waits for the next event of kind, failing after 10 s; the events
// before it are returned too.
func next(t *testing.T, sub *Subscription, kind Kind) (Event, []Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var seen []Event
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for a %s event: %v (seen %d events)", kind, err, len(seen))
		}
		if e.Kind == kind {
			return e, seen
		}
		seen = append(seen, e)
	}
}

// Submit, Interrupt and Stop, through the methods alone, with the events
// that tell what happened.
func TestSessionMethods(t *testing.T) {
	s, sub := newSession(t, `{"turns":[
 {"match":{"user":"hello"},"reply":{"text":"HI"}},
 {"match":{"user":"slow"},"reply":{"delay_ms":60000,"text":"never"}},
 {"match":{"user":"again"},"reply":{"text":"BACK"}}
]}`)
	ctx := context.Background()
	s.Submit(ctx, "hello")
	started, _ := next(t, sub, KindTurnStarted)
	if started.Text != "hello" {
		t.Errorf("turn started with %q", started.Text)
	}
	text, _ := next(t, sub, KindText)
	if text.Agent == nil || text.Agent.Message == nil || !strings.Contains(text.Agent.Message.Text(), "HI") {
		t.Errorf("text event %+v", text.Agent)
	}
	ended, _ := next(t, sub, KindTurnEnded)
	if ended.Err != nil || ended.Result == nil || ended.Result.Text != "HI" {
		t.Fatalf("turn ended %+v, %v", ended.Result, ended.Err)
	}

	// A slow turn, interrupted: the session stays usable.
	s.Submit(ctx, "slow")
	next(t, sub, KindTurnStarted)
	// The prompt reaching the agent (its user event) says its turn runs.
	for e, _ := next(t, sub, KindAgent); e.Agent.Type != agent.EventUser; e, _ = next(t, sub, KindAgent) {
	}
	if !s.Interrupt() {
		t.Fatal("no turn to interrupt while the lead waits for its model")
	}
	ended, _ = next(t, sub, KindTurnEnded)
	if ended.Result == nil || !ended.Result.Interrupted {
		t.Fatalf("interrupted turn ended %+v, %v", ended.Result, ended.Err)
	}
	s.Submit(ctx, "again")
	if ended, _ = next(t, sub, KindTurnEnded); ended.Result == nil || ended.Result.Text != "BACK" {
		t.Fatalf("the turn after the interrupt: %+v, %v", ended.Result, ended.Err)
	}

	// A background task stopped by id: started and ended events.
	st, err := s.Registry().Go(task.State{Type: task.LocalAgent, Description: "waits"}, func(ctx context.Context, id task.ID) task.Outcome {
		<-ctx.Done()
		return task.Outcome{Status: task.Failed}
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Observe(agent.Event{Type: agent.EventUser}) // a lead event drains the task events, as a working lead's do
	if e, _ := next(t, sub, KindTaskStarted); e.Task.State.ID != st.ID {
		t.Errorf("task started event for %s, want %s", e.Task.State.ID, st.ID)
	}
	if got, err := s.Stop(ctx, string(st.ID)); err != nil || got.Status != task.Killed {
		t.Fatalf("Stop = %v, %v", got.Status, err)
	}
	if _, err := s.Stop(ctx, "anosuchid"); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("Stop of an unknown id: %v", err)
	}
	s.Observe(agent.Event{Type: agent.EventUser})
	if e, _ := next(t, sub, KindTaskEnded); e.Task.State.Status != task.Killed {
		t.Errorf("task ended %s", e.Task.State.Status)
	}
	if err := s.SendTo(ctx, "helper", "hi"); err == nil || !strings.Contains(err.Error(), "no team") {
		t.Errorf("SendTo without a team: %v", err)
	}
}

// A subscriber that does not read never blocks the session, loses
// nothing but coalesced progress, and Close ends Next once drained.
func TestSubscriptions(t *testing.T) {
	var b bus
	slow, fast := b.subscribe(false), b.subscribe(true)
	prog := func(id string, n int) Event {
		return Event{Kind: KindTaskProgress, Task: &task.Event{Kind: task.EventOutput, State: task.State{ID: task.ID(id)}, Offset: int64(n)}}
	}
	for i := range 1000 {
		b.publish(prog("b1", i))
	}
	b.publish(Event{Kind: KindTaskEnded, Task: &task.Event{State: task.State{ID: "b1"}}})
	b.publish(prog("b2", 1))
	if n := slow.q.Len(); n != 1002 {
		t.Errorf("the uncoalesced subscriber holds %d events, want 1002", n)
	}
	var kinds []string
	for {
		e, ok := fast.TryNext()
		if !ok {
			break
		}
		kinds = append(kinds, string(e.Kind)+":"+string(e.Task.State.ID))
		if e.Kind == KindTaskProgress && e.Task.State.ID == "b1" && e.Task.Offset != 999 {
			t.Errorf("the coalesced progress is offset %d, want the last (999)", e.Task.Offset)
		}
	}
	if got := strings.Join(kinds, " "); got != "task_progress:b1 task_ended:b1 task_progress:b2" {
		t.Errorf("coalesced stream %q", got)
	}
	b.close()
	if _, err := slow.Next(context.Background()); err != nil {
		t.Errorf("a closed subscription lost its queue: %v", err)
	}
	for range 1001 {
		slow.TryNext()
	}
	if _, err := slow.Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Next on a drained closed subscription: %v", err)
	}
	b.publish(prog("b3", 1)) // after close: nobody gets it, nothing blocks
}

// Permission questions wait in one queue, reported with their place in
// it, until Answer (or until the asker gives up); the lead's and the
// team's adapters carry the verdict through.
func TestAskAnswer(t *testing.T) {
	s, sub := newSession(t, `{"turns":[{"match":{},"reply":{"text":"x"},"repeat":true}]}`)
	ctx := context.Background()
	type result struct {
		ans approve.Answer
		err error
	}
	lead := make(chan result, 1)
	go func() {
		a, err := s.LeadAsker().Ask(ctx, approve.AskRequest{Tool: "Bash", Input: []byte(`{"command":"make"}`), Reason: "make needs approval"})
		lead <- result{a, err}
	}()
	q1, _ := next(t, sub, KindPermission)
	if q1.Question.Agent != "team-lead" || q1.Question.Tool != "Bash" || q1.Queued != 1 {
		t.Fatalf("first question %+v, queued %d", q1.Question, q1.Queued)
	}
	mate := make(chan swarm.PermissionAnswer, 1)
	go func() {
		a, _ := s.TeamAnswerer()(ctx, swarm.PermissionAsk{Worker: "ann", Color: "blue", Tool: "Edit", Description: "edit outside"})
		mate <- a
	}()
	q2, _ := next(t, sub, KindPermission)
	if q2.Question.Agent != "ann" || !q2.Question.Teammate || q2.Queued != 2 {
		t.Fatalf("second question %+v, queued %d", q2.Question, q2.Queued)
	}
	if qs := s.Questions(); len(qs) != 2 || qs[0].ID != q1.Question.ID {
		t.Errorf("Questions = %+v", qs)
	}
	if err := s.Answer(q2.Question.ID, Verdict{Allow: true, Always: true, Rule: "Edit(./docs/**)"}); err != nil {
		t.Fatal(err)
	}
	if a := <-mate; !a.Allow || !a.Always || a.Rule != "Edit(./docs/**)" {
		t.Errorf("the teammate got %+v", a)
	}
	if e, _ := next(t, sub, KindPermissionAnswer); e.Verdict == nil || !e.Verdict.Allow || e.Queued != 1 {
		t.Errorf("answer event %+v", e)
	}
	if err := s.Answer(q1.Question.ID, Verdict{Message: "not now"}); err != nil {
		t.Fatal(err)
	}
	if r := <-lead; r.err != nil || r.ans.Allow || r.ans.Message != "not now" {
		t.Errorf("the lead got %+v, %v", r.ans, r.err)
	}
	if err := s.Answer(q1.Question.ID, Verdict{Allow: true}); err == nil {
		t.Error("a question was answered twice")
	}
	// A question whose asker gives up is withdrawn.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := s.Ask(cctx, Question{Agent: "bob", Tool: "Bash"}); done <- err }()
	q3, _ := next(t, sub, KindPermission)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("a withdrawn question returned %v", err)
	}
	if e, _ := next(t, sub, KindPermissionAnswer); e.Err == nil || e.Question.ID != q3.Question.ID || e.Queued != 0 {
		t.Errorf("withdrawal event %+v", e)
	}
	if len(s.Questions()) != 0 {
		t.Error("a withdrawn question is still queued")
	}
}

func TestSetMode(t *testing.T) {
	s, sub := newSession(t, `{"turns":[{"match":{},"reply":{"text":"x"},"repeat":true}]}`)
	if err := s.SetMode("plan"); err == nil {
		t.Error("SetMode without an approver")
	}
	a := swarm.NewApprover(&approve.Approver{Mode: permission.ModeDefault})
	s.SetApprover(a)
	if err := s.SetMode("acceptEdits"); err != nil || a.Mode() != permission.ModeAcceptEdits {
		t.Fatalf("SetMode: %v, mode %s", err, a.Mode())
	}
	if e, _ := next(t, sub, KindMode); e.Text != "acceptEdits" {
		t.Errorf("mode event %q", e.Text)
	}
	if err := s.SetMode("sideways"); err == nil || a.Mode() != permission.ModeAcceptEdits {
		t.Errorf("a bad mode: %v, mode %s", err, a.Mode())
	}
}

func TestTeamKinds(t *testing.T) {
	s, sub := newSession(t, `{"turns":[{"match":{},"reply":{"text":"x"},"repeat":true}]}`)
	for k, want := range map[string]Kind{
		swarm.EventCreated: KindTeamCreated, swarm.EventRemoved: KindTeamDeleted, swarm.EventSpawned: KindTeammateJoined,
		swarm.EventIdle: KindTeammateState, swarm.EventDead: KindTeammateState, swarm.EventMessage: KindMessage,
		swarm.EventPermission: KindTeamPermission, swarm.EventWarning: KindTeam,
	} {
		s.TeamEvent(swarm.Event{Time: time.Now(), Agent: "ann", Kind: k, Text: k})
		e, _ := next(t, sub, want)
		if e.Team == nil || e.Team.Kind != k {
			t.Errorf("%s: event %+v", k, e)
		}
	}
}

// A prompt submitted right as a run ends is never lost: it runs, in that
// run or in the next.
func TestSubmitAtRunEnd(t *testing.T) {
	s, sub := newSession(t, `{"turns":[{"match":{},"reply":{"text":"pong"},"repeat":true}]}`)
	ctx := context.Background()
	const n = 40
	s.Submit(ctx, "ping 0")
	for i := 1; i < n; i++ {
		next(t, sub, KindTurnEnded)
		s.Submit(ctx, fmt.Sprintf("ping %d", i)) // at once, while the run may still be ending
	}
	next(t, sub, KindTurnEnded)
	users := 0
	for _, m := range s.leadAgent().Messages() {
		if m.Role == "user" && strings.HasPrefix(m.Text(), "ping") {
			users++
		}
	}
	if users != n {
		t.Errorf("the lead saw %d of the %d prompts", users, n)
	}
}
