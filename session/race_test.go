package session

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/task"
)

// clockHook is a session clock that, once armed, holds the first call
// made directly by the function named fn (a method's name as runtime
// reports it, e.g. "(*Session).endRun") until released: a way to stop a
// run at one step and act meanwhile.
type clockHook struct {
	fn      string
	armed   atomic.Bool
	hit     chan struct{} // closed when the call is held
	release chan struct{}
}

func newClockHook(fn string) *clockHook {
	return &clockHook{fn: fn, hit: make(chan struct{}), release: make(chan struct{})}
}

func (h *clockHook) now() time.Time {
	if h.armed.Load() {
		if pc, _, _, ok := runtime.Caller(1); ok && strings.HasSuffix(runtime.FuncForPC(pc).Name(), h.fn) && h.armed.CompareAndSwap(true, false) {
			close(h.hit)
			<-h.release
		}
	}
	return time.Now()
}

// A prompt submitted while a run is ending is run by that run, and the
// run's end is reported before any later start: turns never overlap in
// the event stream, Running tells the truth, and no prompt meets a busy
// lead. (A run used to mark itself not running before its end step, so a
// Submit then started a second run that the first's end marked not
// running, and the next Submit ran into the busy lead.)
func TestTurnEndsBeforeTheNextStarts(t *testing.T) {
	h := newClockHook("(*Session).endRun")
	s, sub := newInteractiveAt(t, `{"turns":[
		{"match":{"user":"second"},"reply":{"delay_ms":500,"text":"slow pong"},"repeat":true},
		{"match":{},"reply":{"text":"pong"},"repeat":true}]}`, h.now)
	ctx := context.Background()
	h.armed.Store(true)
	s.Submit(ctx, "first")
	<-h.hit // the run is at its end step
	s.Submit(ctx, "second")
	close(h.release)
	s.Submit(ctx, "third")
	var turns []Kind
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for !took(s, "first", "second", "third") || s.Running() || len(turns) == 0 || turns[len(turns)-1] != KindTurnEnded {
		e, err := sub.Next(wctx)
		if err != nil {
			t.Fatalf("the lead took all three prompts: %v, running %v: %v (turn events %v)", took(s, "first", "second", "third"), s.Running(), err, turns)
		}
		switch e.Kind {
		case KindTurnStarted, KindTurnEnded:
			turns = append(turns, e.Kind)
		}
		if e.Kind == KindTurnEnded && e.Err != nil {
			t.Fatalf("a run ended with %v", e.Err)
		}
	}
	for i, k := range turns {
		if want := []Kind{KindTurnStarted, KindTurnEnded}[i%2]; k != want {
			t.Fatalf("turn events %v: event %d is %s, want %s (turns overlap)", turns, i, k, want)
		}
	}
}

// took reports whether the lead took every one of prompts (prompts sent
// to a working lead may come to it joined in one message).
func took(s *Session, prompts ...string) bool {
	var all strings.Builder
	for _, m := range s.leadAgent().Messages() {
		if m.Role == "user" {
			all.WriteString(m.Text())
		}
	}
	for _, p := range prompts {
		if !strings.Contains(all.String(), p) {
			return false
		}
	}
	return true
}

// A Foreground refused (an unknown task, a task that holds no lead)
// changes nothing: the working lead is not moved aside.
func TestForegroundRefusedChangesNothing(t *testing.T) {
	s, sub := newInteractive(t, `{"turns":[{"match":{"user":"slow"},"reply":{"delay_ms":2000,"text":"SLOW"}}]}`)
	ctx := context.Background()
	lead := s.Lead()
	s.Submit(ctx, "slow")
	waitUser(t, sub)
	if err := s.Foreground(ctx, "bnosuchtask"); err == nil || !strings.Contains(err.Error(), "no task bnosuchtask") {
		t.Fatalf("Foreground(unknown) = %v; want an error naming the task", err)
	}
	if s.Lead() != lead {
		t.Error("a refused Foreground moved the working lead aside")
	}
	for e, ok := sub.TryNext(); ok; e, ok = sub.TryNext() {
		if e.Kind == KindBackgrounded {
			t.Errorf("a refused Foreground backgrounded the turn (task %s)", e.TaskID)
		}
	}
	if !s.Running() {
		t.Error("the lead's run stopped")
	}
}

// Stop of a backgrounded turn that Foreground brings back while the turn
// ends returns: the turn's end no longer comes as a background task's, so
// Foreground tells the waiting Stop (which used to wait forever).
func TestStopWhileBroughtBack(t *testing.T) {
	h := newClockHook("(*Session).run")
	s, sub := newInteractiveAt(t, `{"turns":[{"match":{"user":"forever"},"reply":{"delay_ms":60000,"text":"never"}}]}`, h.now)
	ctx := context.Background()
	s.Submit(ctx, "forever")
	waitUser(t, sub)
	id, err := s.Background(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h.armed.Store(true) // the run's next look at the clock: its background end
	stopped := make(chan error, 1)
	go func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := s.Stop(sctx, string(id))
		stopped <- err
	}()
	<-h.hit // the turn was interrupted; its run is about to end the task
	if err := s.Foreground(ctx, id); err != nil {
		t.Fatalf("Foreground(%s) = %v", id, err)
	}
	close(h.release)
	if err := <-stopped; err != nil {
		t.Fatalf("Stop(%s) = %v; want it to return once the turn was brought back", id, err)
	}
}

// Task events are reported in the registry's order, though the lead
// (between tool rounds), a waiting run and Serve all take them: no task
// is reported started after its end.
func TestTaskEventsKeepOrder(t *testing.T) {
	s, sub := newInteractive(t, `{"turns":[{"match":{},"reply":{"text":"x"},"repeat":true}]}`)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() {
		for ctx.Err() == nil {
			s.Observe(agent.Event{Type: agent.EventDelta}) // the lead between tool rounds
		}
	})
	const n = 3000
	for range n {
		if _, err := s.Registry().Go(task.State{Type: task.LocalAgent, Description: "q"}, func(context.Context, task.ID) task.Outcome {
			return task.Outcome{Status: task.Completed}
		}); err != nil {
			t.Fatal(err)
		}
	}
	ended := map[task.ID]bool{}
	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	defer wcancel()
	for len(ended) < n {
		e, err := sub.Next(wctx)
		if err != nil {
			t.Fatalf("%d of %d tasks reported ended: %v", len(ended), n, err)
		}
		switch e.Kind {
		case KindTaskStarted:
			if ended[e.Task.State.ID] {
				t.Fatalf("task %s reported started after its end", e.Task.State.ID)
			}
		case KindTaskEnded:
			ended[e.Task.State.ID] = true
		}
	}
}

// An answer that wins the race with the asker's end holds: the asker gets
// the verdict the stream reported, not its context's error.
func TestAnswerRacingWithdraw(t *testing.T) {
	s, sub := newSession(t, `{"turns":[{"match":{},"reply":{"text":"x"},"repeat":true}]}`)
	for i := range 200 {
		ctx, cancel := context.WithCancel(context.Background())
		res := make(chan error, 1)
		go func() { _, err := s.Ask(ctx, Question{Tool: "Bash"}); res <- err }()
		q, _ := next(t, sub, KindPermission)
		cancel()
		answered := s.Answer(q.Question.ID, Verdict{Allow: true}) == nil
		if err := <-res; answered && err != nil {
			t.Fatalf("round %d: Answer took the question and reported the verdict, but the asker got %v", i, err)
		}
	}
}

// A closed session starts no run and makes no live subscription.
func TestClosedSession(t *testing.T) {
	s, _ := newSession(t, `{"turns":[{"match":{},"reply":{"text":"x"},"repeat":true}]}`)
	s.Close()
	if _, err := s.Run(context.Background(), "after close"); !errors.Is(err, ErrClosed) {
		t.Errorf("Run after Close = %v; want ErrClosed", err)
	}
	s.Submit(context.Background(), "after close")
	s.runs.Wait()
	if took(s, "after close") {
		t.Error("the lead took a prompt after Close")
	}
	late := s.Subscribe(false)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := late.Next(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Next on a subscription made after Close = %v; want ErrClosed", err)
	}
}

// An Interrupt that comes while a run is under way but no turn runs (here
// before its first turn; likewise between two turns) stops the run: no
// model call starts, and the run ends interrupted. It used to find no
// turn to abort, report false, and let the next turn run.
func TestInterruptBetweenTurns(t *testing.T) {
	h := newClockHook("(*Session).run")
	s, sub := newInteractiveAt(t, `{"turns":[{"match":{},"reply":{"text":"ANSWERED"},"repeat":true}]}`, h.now)
	ctx := context.Background()
	h.armed.Store(true)
	s.Submit(ctx, "do it")
	<-h.hit // the run has begun; its first turn has not
	if !s.Interrupt() {
		t.Error("Interrupt of a run between turns = false; want true")
	}
	close(h.release)
	e, _ := next(t, sub, KindTurnEnded)
	if e.Result == nil || !e.Result.Interrupted || e.Result.Calls != 0 {
		t.Fatalf("run ended with %+v; want interrupted, with no model call", e.Result)
	}
	// The session goes on: the next prompt runs.
	s.Submit(ctx, "again")
	if e, _ := next(t, sub, KindTurnEnded); e.Result == nil || e.Result.Interrupted || !strings.Contains(e.Result.Text, "ANSWERED") {
		t.Fatalf("the next run ended with %+v; want an answer", e.Result)
	}
}
