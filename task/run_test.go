package task

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestGoFinishes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestRegistry(t, Config{PollInterval: -1})
		sub := r.Subscribe()
		defer sub.Close()
		s, err := r.Go(State{Type: LocalAgent, Description: "greeter", ToolUseID: "toolu_a", Detail: &Agent{Prompt: "hi"}},
			func(ctx context.Context, id ID) Outcome {
				time.Sleep(325 * time.Millisecond)
				return Outcome{Status: Completed, Record: func(s State) State {
					s.Detail = s.Detail.(*Agent).With(func(a *Agent) { a.Result = "HELPER-DONE"; a.Usage.TotalTokens = 20 })
					return s
				}}
			})
		if err != nil || s.Status != Running {
			t.Fatalf("Go = %s, %v; want running", s.Status, err)
		}
		synctest.Wait()
		time.Sleep(time.Second)
		es := drain(sub)
		var started, term *Event
		for i := range es {
			switch es[i].Kind {
			case EventStarted:
				started = &es[i]
			case EventTerminated:
				term = &es[i]
			}
		}
		if started == nil || term == nil {
			t.Fatalf("events %v; want task_started and task_terminated", es)
		}
		for _, want := range []string{"<status>completed</status>", "<result>HELPER-DONE</result>", "<total_tokens>20</total_tokens>", "<duration_ms>325</duration_ms>", `Agent "greeter" finished`} {
			if !strings.Contains(term.Notification, want) {
				t.Errorf("notification %q; want %q in it", term.Notification, want)
			}
		}
		sj, _ := started.StreamJSON()
		b, _ := json.Marshal(sj)
		want := `{"type":"system","subtype":"task_started","task_id":"` + string(s.ID) + `","tool_use_id":"toolu_a","description":"greeter","task_type":"local_agent"}`
		if string(b) != want {
			t.Errorf("task_started = %s; want %s", b, want)
		}
		sj, _ = term.StreamJSON()
		b, _ = json.Marshal(sj)
		want = `{"type":"system","subtype":"task_terminated","task_id":"` + string(s.ID) + `","status":"completed","summary":"Agent \"greeter\" finished"}`
		if string(b) != want {
			t.Errorf("task_terminated = %s; want %s", b, want)
		}
		if _, ok := (Event{Kind: EventOutput}).StreamJSON(); ok {
			t.Error("task_output has a stream-json form; want none")
		}
	})
}

func TestGoStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestRegistry(t, Config{PollInterval: -1})
		sub := r.Subscribe()
		defer sub.Close()
		var cause error
		s, _ := r.Go(State{Type: LocalAgent, Detail: &Agent{}}, func(ctx context.Context, id ID) Outcome {
			<-ctx.Done()
			cause = context.Cause(ctx)
			return Outcome{Status: Failed}
		})
		got, err := r.Stop(t.Context(), s.ID)
		if err != nil || got.Status != Killed {
			t.Fatalf("Stop = %s, %v; want killed", got.Status, err)
		}
		if !errors.Is(cause, ErrStopped) {
			t.Errorf("cause = %v; want ErrStopped", cause)
		}
		synctest.Wait()
		es := drain(sub)
		if n := countKind(es, EventTerminated); n != 1 {
			t.Errorf("%d task_terminated; want 1", n)
		}
		for _, e := range es {
			if e.Notification != "" {
				t.Errorf("a stopped task notified the model: %q", e.Notification)
			}
		}
	})
}

func TestGoClosedByClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := New(Config{})
		s, _ := r.Go(State{Type: InProcessTeammate, Detail: &Teammate{}}, func(ctx context.Context, id ID) Outcome {
			<-ctx.Done()
			return Outcome{Status: Completed}
		})
		if err := r.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got, _ := r.Get(s.ID); got.Status != Killed {
			t.Errorf("after Close: %s; want killed", got.Status)
		}
		if _, err := r.Go(State{Type: Dream}, nil); !errors.Is(err, ErrClosed) {
			t.Errorf("Go after Close = %v; want ErrClosed", err)
		}
	})
}
