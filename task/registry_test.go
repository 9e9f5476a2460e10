package task

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/troupe-dev/troupe/llm"
)

// newTestRegistry returns a registry closed at the end of the test.
func newTestRegistry(t *testing.T, cfg Config) *Registry {
	t.Helper()
	r := New(cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Close(ctx); err != nil {
			t.Errorf("Close = %v", err)
		}
	})
	return r
}

// drain returns the events queued on sub.
func drain(sub *Subscription) []Event {
	var out []Event
	for {
		e, ok := sub.TryNext()
		if !ok {
			return out
		}
		out = append(out, e)
	}
}

func countKind(es []Event, k EventKind) int {
	n := 0
	for _, e := range es {
		if e.Kind == k {
			n++
		}
	}
	return n
}

func TestRegistryTransitions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestRegistry(t, Config{PollInterval: -1})
		for _, from := range Statuses {
			for _, to := range Statuses {
				s, err := r.Register(State{Type: LocalWorkflow, Status: from}, nil)
				if err != nil {
					t.Fatalf("Register = %v", err)
				}
				got, err := r.Update(s.ID, func(s State) State { s.Status = to; return s })
				wantErr := CheckTransition(from, to)
				if (err == nil) != (wantErr == nil) {
					t.Errorf("Update(%s -> %s) = %v; want %v", from, to, err, wantErr)
				}
				want := to
				if err != nil {
					want = from
				}
				if now, _ := r.Get(s.ID); got.Status != want || now.Status != want {
					t.Errorf("Update(%s -> %s): status %s, stored %s; want %s", from, to, got.Status, now.Status, want)
				}
				if err == nil && to.Terminal() && from != to && got.End.IsZero() {
					t.Errorf("Update(%s -> %s): End not set", from, to)
				}
			}
		}
	})
}

func TestUpdateNoOpWakesNobody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestRegistry(t, Config{PollInterval: -1})
		s, _ := r.Register(State{Type: LocalAgent, Status: Running, Detail: &Agent{Prompt: "p"}}, nil)
		sub := r.Subscribe()
		defer sub.Close()
		woke := make(chan Event, 1)
		go func() {
			e, err := sub.Next(t.Context())
			if err == nil {
				woke <- e
			}
		}()
		synctest.Wait()
		if _, err := r.Update(s.ID, func(s State) State { return s }); err != nil {
			t.Fatalf("Update(no-op) = %v", err)
		}
		if _, err := r.Update(s.ID, func(s State) State { s.Description = ""; return s }); err != nil {
			t.Fatalf("Update(same value) = %v", err)
		}
		synctest.Wait()
		select {
		case e := <-woke:
			t.Fatalf("a no-op update woke a subscriber with %v", e.Kind)
		default:
		}
		r.Update(s.ID, func(s State) State { s.Description = "new"; return s })
		synctest.Wait()
		select {
		case e := <-woke:
			if e.Kind != EventUpdated || e.State.Description != "new" {
				t.Errorf("event = %v %q; want task_updated \"new\"", e.Kind, e.State.Description)
			}
		default:
			t.Fatal("a real update woke nobody")
		}
	})
}

func TestUpdateRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestRegistry(t, Config{PollInterval: -1})
		s, _ := r.Register(State{Type: LocalAgent, Detail: &Agent{}}, nil)
		tests := []struct {
			name string
			f    func(State) State
			want error
		}{
			{"type change", func(s State) State { s.Type = Dream; return s }, ErrBadDetail},
			{"wrong detail", func(s State) State { s.Detail = &Shell{}; return s }, ErrBadDetail},
			{"pending to completed", func(s State) State { s.Status = Completed; return s }, ErrTransition},
		}
		for _, tt := range tests {
			if _, err := r.Update(s.ID, tt.f); !errors.Is(err, tt.want) {
				t.Errorf("Update(%s) = %v; want %v", tt.name, err, tt.want)
			}
		}
		if _, err := r.Update("a00000000", func(s State) State { return s }); !errors.Is(err, ErrNotFound) {
			t.Errorf("Update(unknown) = %v; want ErrNotFound", err)
		}
		if _, err := r.Register(State{Type: LocalAgent, Detail: Dream1{}}, nil); !errors.Is(err, ErrBadDetail) {
			t.Errorf("Register(non-pointer detail) = %v; want ErrBadDetail", err)
		}
	})
}

// Dream1 is a non-pointer Detail, which Register refuses.
type Dream1 struct{}

func (Dream1) TaskType() Type { return LocalAgent }

func TestRegisterResumeKeepsUIState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestRegistry(t, Config{PollInterval: -1})
		msgs := []llm.Message{{Role: llm.RoleUser}}
		first, _ := r.Register(State{Type: LocalAgent, Status: Running, Description: "v1",
			Detail: &Agent{Prompt: "p1", Messages: msgs, PendingMessages: []string{"hi"}, DiskLoaded: true}}, nil)
		r.Update(first.ID, func(s State) State { s.Retain = true; return s })
		time.Sleep(time.Minute)
		got, err := r.Register(State{ID: first.ID, Type: LocalAgent, Status: Running, Description: "v2",
			Detail: &Agent{Prompt: "p2"}}, nil)
		if err != nil {
			t.Fatalf("Register(resume) = %v", err)
		}
		a := got.Detail.(*Agent)
		if !got.Retain || !got.Start.Equal(first.Start) || len(a.Messages) != 1 || len(a.PendingMessages) != 1 || !a.DiskLoaded {
			t.Errorf("resume lost UI state: retain %v start %v (want %v) messages %d pending %d diskLoaded %v",
				got.Retain, got.Start, first.Start, len(a.Messages), len(a.PendingMessages), a.DiskLoaded)
		}
		if got.Description != "v2" || a.Prompt != "p2" {
			t.Errorf("resume = %q %q; want the new description and prompt", got.Description, a.Prompt)
		}
		if _, err := r.Register(State{ID: first.ID, Type: Dream}, nil); !errors.Is(err, ErrExists) {
			t.Errorf("Register(same id, other type) = %v; want ErrExists", err)
		}
	})
}

func TestNotifyExactlyOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var kills sync.WaitGroup
		r := newTestRegistry(t, Config{PollInterval: -1, Kill: map[Type]KillFunc{
			LocalAgent: func(context.Context, State) error { return nil },
		}})
		for round := range 50 {
			s, _ := r.Register(State{Type: LocalAgent, Status: Running, Detail: &Agent{}}, nil)
			sub := r.Subscribe()
			for g := range 16 {
				kills.Go(func() {
					switch g % 4 {
					case 0:
						r.Finish(s.ID, Completed, nil)
					case 1:
						r.Finish(s.ID, Failed, nil)
					case 2:
						r.Stop(t.Context(), s.ID)
					case 3:
						r.Notify(s.ID)
					}
				})
			}
			kills.Wait()
			es := drain(sub)
			sub.Close()
			if n := countKind(es, EventTerminated); n != 1 {
				t.Fatalf("round %d: %d task_terminated events; want 1", round, n)
			}
			got, _ := r.Get(s.ID)
			if !got.Notified || !got.Status.Terminal() {
				t.Fatalf("round %d: state %s notified=%v; want terminal and notified", round, got.Status, got.Notified)
			}
			for _, e := range es {
				if e.Kind == EventTerminated && (e.Notification == "") != (got.Status == Killed) {
					t.Errorf("round %d: %s task: notification %q; want one exactly when not stopped", round, got.Status, e.Notification)
				}
			}
		}
	})
}

func TestStopChecks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestRegistry(t, Config{PollInterval: -1})
		if _, err := r.Stop(t.Context(), "a00000000"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Stop(unknown) = %v; want ErrNotFound", err)
		}
		s, _ := r.Register(State{Type: Dream, Status: Running}, nil)
		r.Finish(s.ID, Completed, nil)
		if _, err := r.Stop(t.Context(), s.ID); !errors.Is(err, ErrNotRunning) {
			t.Errorf("Stop(completed) = %v; want ErrNotRunning", err)
		}
		killed := 0
		s2, _ := r.Register(State{Type: Dream, Status: Running}, func(context.Context, State) error { killed++; return nil })
		got, err := r.Stop(t.Context(), s2.ID)
		if err != nil || got.Status != Killed || !got.Notified || killed != 1 {
			t.Errorf("Stop = %s notified=%v kills=%d, %v; want killed, notified, 1 kill", got.Status, got.Notified, killed, err)
		}
	})
}

func TestEvictionGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestRegistry(t, Config{}) // the poll loop runs on the bubble's clock
		sub := r.Subscribe()
		defer sub.Close()
		s, _ := r.Register(State{Type: LocalAgent, Status: Running, Detail: &Agent{}}, nil)
		time.Sleep(500 * time.Millisecond) // between two polls
		r.Finish(s.ID, Completed, nil)
		time.Sleep(29 * time.Second)
		if _, ok := r.Get(s.ID); !ok {
			t.Fatal("task evicted before its 30 s grace period")
		}
		time.Sleep(1500 * time.Millisecond) // past 30.5 s and the poll at 31 s
		synctest.Wait()
		if _, ok := r.Get(s.ID); ok {
			t.Fatal("task still there 1 poll after its grace period")
		}
		if n := countKind(drain(sub), EventEvicted); n != 1 {
			t.Errorf("%d task_evicted events; want 1", n)
		}

		// Retained, unnotified and live tasks stay.
		kept := []State{{Type: Dream, Status: Running}, {Type: Dream, Status: Completed}}
		for _, k := range kept {
			r.Register(k, nil)
		}
		ret, _ := r.Register(State{Type: Dream, Status: Running}, nil)
		r.Update(ret.ID, func(s State) State { s.Retain = true; return s })
		r.Finish(ret.ID, Completed, nil)
		time.Sleep(time.Hour)
		if n := len(r.List()); n != 3 {
			t.Errorf("after an hour: %d tasks; want 3 (live, unnotified, retained)", n)
		}
	})
}

func TestEvictionUsesFreshState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestRegistry(t, Config{PollInterval: -1})
		s, _ := r.Register(State{Type: Dream, Status: Running}, nil)
		r.Finish(s.ID, Completed, nil)
		time.Sleep(31 * time.Second)
		// Between Poll's snapshot and its apply, the UI retains the task.
		r.testHookPollRead = func() { r.Update(s.ID, func(s State) State { s.Retain = true; return s }) }
		rep, err := r.Poll(t.Context())
		if err != nil || len(rep.Evicted) != 0 {
			t.Fatalf("Poll = %v, %v; want nothing evicted", rep.Evicted, err)
		}
		if got, ok := r.Get(s.ID); !ok || !got.Retain {
			t.Fatalf("task lost or its retain flag overwritten: %v %+v", ok, got)
		}
	})
}

func TestPollIncrementalOutput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		r := newTestRegistry(t, Config{PollInterval: -1})
		path := filepath.Join(dir, "out")
		out, err := OpenOutput(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		s, _ := r.Register(State{Type: LocalAgent, Status: Running, OutputFile: path, Detail: &Agent{}}, nil)
		steps := []struct{ write, want string }{
			{"abc", "abc"}, {"", ""}, {"def\n", "def\n"}, {"g", "g"},
		}
		var off int64
		for i, st := range steps {
			out.Write([]byte(st.write))
			rep, err := r.Poll(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var got string
			for _, c := range rep.Output {
				if c.ID == s.ID {
					got = string(c.Data)
					if c.Offset != off {
						t.Errorf("step %d: chunk offset %d; want %d", i, c.Offset, off)
					}
				}
			}
			if got != st.want {
				t.Errorf("step %d: Poll output %q; want %q", i, got, st.want)
			}
			off += int64(len(st.want))
			if now, _ := r.Get(s.ID); now.OutputOffset != off {
				t.Errorf("step %d: offset %d; want %d", i, now.OutputOffset, off)
			}
		}
		// A concurrent reporter that moved the offset wins: Poll drops its chunk.
		out.Write([]byte("zz"))
		r.testHookPollRead = func() { r.Update(s.ID, func(s State) State { s.OutputOffset += 2; return s }) }
		if rep, _ := r.Poll(t.Context()); len(rep.Output) != 0 {
			t.Errorf("Poll after a concurrent report = %v; want no output", rep.Output)
		}
		if now, _ := r.Get(s.ID); now.OutputOffset != off+2 {
			t.Errorf("offset %d; want %d", now.OutputOffset, off+2)
		}
	})
}

func TestClosedRegistry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := New(Config{Dir: t.TempDir()})
		sub := r.Subscribe()
		if err := r.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(t.Context()); err != nil {
			t.Errorf("second Close = %v; want nil", err)
		}
		if _, err := r.Register(State{Type: Dream}, nil); !errors.Is(err, ErrClosed) {
			t.Errorf("Register after Close = %v; want ErrClosed", err)
		}
		if _, err := sub.Next(t.Context()); !errors.Is(err, ErrClosed) {
			t.Errorf("Next after Close = %v; want ErrClosed", err)
		}
	})
}

func TestStopKillFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestRegistry(t, Config{PollInterval: -1})
		boom := errors.New("boom")
		fail := true
		s, _ := r.Register(State{Type: Dream, Status: Running}, func(context.Context, State) error {
			if fail {
				return boom
			}
			return nil
		})
		got, err := r.Stop(t.Context(), s.ID)
		if !errors.Is(err, boom) || got.Status != Running || got.Notified {
			t.Fatalf("Stop with a failing kill = %s notified=%v, %v; want still running, boom", got.Status, got.Notified, err)
		}
		// A later natural end is notified normally.
		fail = false
		if got, _ := r.Finish(s.ID, Completed, nil); got.Status != Completed || !got.Notified {
			t.Errorf("Finish = %s notified=%v; want completed, notified", got.Status, got.Notified)
		}
	})
}

// A task whose owner ends it while Stop is killing it (a remote job's
// result for the cancel, a shell exiting on the signal) ends killed, with
// what the owner recorded, and the Stop succeeds; the model is told by
// the stopper, not by the task.
func TestOwnerEndDuringStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestRegistry(t, Config{PollInterval: -1})
		sub := r.Subscribe()
		defer sub.Close()
		var id ID
		s, _ := r.Register(State{Type: RemoteAgent, Status: Running, Detail: &Remote{Worker: "w1"}}, func(context.Context, State) error {
			// The owner hears the cancel and reports the run's end first.
			_, err := r.Finish(id, Failed, func(s State) State {
				s.Detail = &Remote{Worker: "w1", Error: "stopped by the lead"}
				return s
			})
			return err
		})
		id = s.ID
		got, err := r.Stop(t.Context(), id)
		if err != nil || got.Status != Killed {
			t.Fatalf("Stop = %s, %v; want killed, no error", got.Status, err)
		}
		if d, _ := got.Detail.(*Remote); d == nil || d.Error != "stopped by the lead" {
			t.Errorf("detail %+v; want the owner's record kept", got.Detail)
		}
		for {
			e, err := sub.Next(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if e.State.Status.Terminal() {
				if e.Notification != "" {
					t.Errorf("the stopped task told the model itself: %q", e.Notification)
				}
				break
			}
		}
	})
}

func TestEvictionArmedByUpdate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestRegistry(t, Config{PollInterval: -1})
		s, _ := r.Register(State{Type: RemoteAgent, Status: Running}, nil)
		// A type that manages its own notification marks it notified itself.
		got, _ := r.Update(s.ID, func(s State) State { s.Status, s.Notified = Completed, true; return s })
		if want := got.End.Add(DefaultGrace); !got.EvictAfter.Equal(want) {
			t.Fatalf("EvictAfter = %v; want %v", got.EvictAfter, want)
		}
		if r.Notify(s.ID) {
			t.Error("Notify after a manual notified flag = true; want false")
		}
		time.Sleep(DefaultGrace)
		if rep, _ := r.Poll(t.Context()); len(rep.Evicted) != 1 {
			t.Errorf("Poll after the grace = %v evicted; want 1", rep.Evicted)
		}
	})
}

// TestFollow hands every later event to f in order, stops on stop (which
// returns only once f is done), and ends by itself when the registry
// closes.
func TestFollow(t *testing.T) {
	r := New(Config{Dir: t.TempDir(), PollInterval: -1})
	events := make(chan EventKind, 16)
	stop := r.Follow(func(e Event) { events <- e.Kind })
	s, err := r.Register(State{Type: LocalAgent, Status: Running, Detail: &Agent{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Finish(s.ID, Completed, nil); err != nil {
		t.Fatal(err)
	}
	var got []EventKind
	for len(got) == 0 || got[len(got)-1] != EventTerminated {
		select {
		case k := <-events:
			got = append(got, k)
		case <-time.After(10 * time.Second):
			t.Fatalf("events %v, and no termination within 10 s", got)
		}
	}
	if got[0] != EventRegistered {
		t.Errorf("events %v; want registered first", got)
	}
	stop()
	if _, err := r.Register(State{Type: LocalAgent, Status: Running, Detail: &Agent{}}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case k := <-events:
		t.Errorf("event %s reached f after stop returned", k)
	default: // stop returned after f's last call, and nothing is following now
	}

	stop = r.Follow(func(Event) {})
	if err := r.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	stop() // returns: the registry's close ended the follow
}
