package workflow

import (
	"slices"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/task"
)

// TestSnapshot: a run's folder read from disk shows what its task's
// detail shows: while an agent runs (it is "running", the settled ones
// "done" with their tokens), and once the run completed (the same phases
// and agents as the task's last detail).
func TestSnapshot(t *testing.T) {
	reg := newReg(t)
	sub := reg.Subscribe()
	started, release := make(chan struct{}), make(chan struct{})
	rn := &echo{answer: func(req Request) (string, error) {
		req.Activity(Activity{Text: "starting", AgentID: "a-" + req.Label})
		if req.Label == "V" {
			close(started)
			<-release // closed at the latest by the test's end
		}
		return "done: " + req.Prompt, nil
	}}
	j, err := Prepare(Launch{Script: mustParse(t, head+`
phase("Review");
await parallel([() => agent("a", {label: "A"}), () => agent("b", {label: "B", phase: "Verify"})]);
phase("Verify");
return await agent("v", {label: "V"})`), Root: t.TempDir(), Runner: rn})
	if err != nil {
		t.Fatal(err)
	}
	released := false
	free := func() {
		if !released {
			released = true
			close(release)
		}
	}
	defer free()
	if _, err := StartTask(reg, j, "", ""); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(20 * time.Second): // a hang fails, it is not a speed check
		t.Fatal("agent V never started")
	}
	// Its "started" line is written by the run's loop, soon after.
	var info RunInfo
	var w *task.Workflow
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		info, w, err = Snapshot(j.Dir.Path)
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Agents) == 3 || time.Now().After(deadline) {
			break
		}
	}
	if info.Status != "running" || w.Phase != "Verify" || len(w.Agents) != 3 {
		t.Fatalf("while V runs: info %+v detail %+v", info, w)
	}
	states := func(w *task.Workflow) []string {
		var out []string
		for _, a := range w.Agents {
			out = append(out, a.Label+"/"+a.Phase+"/"+a.State)
		}
		slices.Sort(out)
		return out
	}
	if got, want := states(w), []string{"A/Review/done", "B/Verify/done", "V/Verify/running"}; !slices.Equal(got, want) {
		t.Errorf("while V runs: agents %q, want %q", got, want)
	}
	if w.Phases[1].Running != 1 || w.Phases[1].Done != 1 || w.Phases[0].Done != 1 {
		t.Errorf("while V runs: phases %+v", w.Phases)
	}
	free()
	e := waitEvent(t, sub, func(e task.Event) bool { return e.Kind == task.EventTerminated })
	live := e.State.Detail.(*task.Workflow)
	info, w, err = Snapshot(j.Dir.Path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != "completed" || w.Usage.TotalTokens != 45 {
		t.Errorf("after: info %+v usage %+v", info, w.Usage)
	}
	if got, want := states(w), states(live); !slices.Equal(got, want) {
		t.Errorf("after: agents %q, the task's %q", got, want)
	}
	if !slices.Equal(w.Phases, live.Phases) {
		t.Errorf("after: phases %+v, the task's %+v", w.Phases, live.Phases)
	}
	for _, a := range w.Agents {
		if a.AgentID != "a-"+a.Label {
			t.Errorf("agent %s: id %q, want the one its runner reported", a.Label, a.AgentID)
		}
		if a.Tokens != 15 {
			t.Errorf("agent %s: %d tokens, want 15", a.Label, a.Tokens)
		}
	}
}

// TestSnapshotMissing: a folder without run.json is an error naming it.
func TestSnapshotMissing(t *testing.T) {
	if _, _, err := Snapshot(t.TempDir()); err == nil {
		t.Fatal("no error for a folder without run.json")
	}
}

// TestApplyAgentID: an activity naming the agent's id sets it on the
// agent's row; a later one without it keeps it.
func TestApplyAgentID(t *testing.T) {
	w := &task.Workflow{}
	w = Apply(w, Event{Kind: EventStarted, Index: 0, Label: "A"}, time.Time{})
	w = Apply(w, Event{Kind: EventActivity, Index: 0, Label: "A", Text: "starting", AgentID: "a12345678"}, time.Time{})
	w = Apply(w, Event{Kind: EventActivity, Index: 0, Label: "A", Text: "Read", Tokens: 9}, time.Time{})
	if a := w.Agents[0]; a.AgentID != "a12345678" || a.Activity != "Read" || a.Tokens != 9 {
		t.Errorf("agent %+v", a)
	}
}
