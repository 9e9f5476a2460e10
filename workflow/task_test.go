package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/task"
)

func newReg(t *testing.T) *task.Registry {
	reg := task.New(task.Config{Dir: t.TempDir(), PollInterval: -1})
	t.Cleanup(func() { reg.Close(context.Background()) })
	return reg
}

// waitEvent waits for the first registry event f accepts.
func waitEvent(t *testing.T, sub *task.Subscription, f func(task.Event) bool) task.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("no such event: %v", err)
		}
		if f(e) {
			return e
		}
	}
}

func TestTaskCompletes(t *testing.T) {
	reg := newReg(t)
	sub := reg.Subscribe()
	j, err := Prepare(Launch{Script: mustParse(t, head+`
phase("Review");
const r = await parallel([() => agent("a", {label: "A"}), () => agent("b", {label: "B"})]);
phase("Verify");
log("verifying", r.length);
return { verdict: await agent("v", {label: "V"}) }`), Root: t.TempDir(), Runner: &echo{}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := StartTask(reg, j, "review", "toolu_1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(st.ID), "w") || st.ID.TypeOf() != task.LocalWorkflow {
		t.Errorf("id = %s; want a w id", st.ID)
	}
	e := waitEvent(t, sub, func(e task.Event) bool { return e.Kind == task.EventTerminated })
	if e.State.Status != task.Completed {
		t.Fatalf("status = %s (%s)", e.State.Status, e.Summary)
	}
	w := e.State.Detail.(*task.Workflow)
	if len(w.Agents) != 3 || w.Phases[0].Done != 2 || w.Phases[1].Done != 1 || w.Agents[2].Label != "V" || w.Agents[2].Tokens != 15 {
		t.Errorf("detail = %+v", w)
	}
	if !strings.Contains(e.Notification, `<result>{&quot;verdict&quot;:&quot;done: v&quot;}</result>`) &&
		!strings.Contains(e.Notification, `<result>{"verdict":"done: v"}</result>`) {
		t.Errorf("notification = %s", e.Notification)
	}
	if !strings.Contains(e.Notification, "<task-type>local_workflow</task-type>") || !strings.Contains(e.Notification, j.ID) {
		t.Errorf("notification = %s", e.Notification)
	}
	out, _ := os.ReadFile(st.OutputFile)
	for _, want := range []string{"== Review", "verifying 2", "[2] V: done", "--- result ---", `"verdict": "done: v"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	runs, err := ListRuns(filepath.Dir(j.Dir.Path))
	if err != nil || len(runs) != 1 || runs[0].Status != "completed" || runs[0].Agents != 3 {
		t.Errorf("ListRuns = %+v, %v", runs, err)
	}
}

func TestTaskStopStopsAgents(t *testing.T) {
	reg := newReg(t)
	var running, stopped atomic.Int32
	started := make(chan struct{}, 8)
	rn := RunnerFunc(func(ctx context.Context, req Request) (Reply, error) {
		running.Add(1)
		started <- struct{}{}
		<-ctx.Done()
		stopped.Add(1)
		return Reply{}, context.Cause(ctx)
	})
	j, err := Prepare(Launch{Script: mustParse(t, head+`return await parallel([1,2,3].map(i => () => agent("x" + i)))`), Root: t.TempDir(), Runner: rn})
	if err != nil {
		t.Fatal(err)
	}
	st, err := StartTask(reg, j, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		<-started
	}
	got, err := reg.Stop(t.Context(), st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != task.Killed || stopped.Load() != 3 {
		t.Errorf("after Stop: status %s, %d of %d agents stopped; want killed and all", got.Status, stopped.Load(), running.Load())
	}
	b, _ := os.ReadFile(filepath.Join(j.Dir.Path, RunFile))
	var ri RunInfo
	if json.Unmarshal(b, &ri) != nil || ri.Status != "killed" {
		t.Errorf("run.json = %s", b)
	}
}

func TestJobResume(t *testing.T) {
	root := t.TempDir()
	src := head + `const a = await agent("one"); const b = await agent("two"); return a + " / " + b`
	flaky := &echo{answer: func(req Request) (string, error) {
		if strings.HasPrefix(req.Prompt, "two") {
			return "", errors.New("rate limited")
		}
		return "first", nil
	}}
	j1, err := Prepare(Launch{Script: mustParse(t, src), Root: root, Runner: flaky})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := j1.Run(t.Context()); err == nil {
		t.Fatal("first run succeeded; want it to fail")
	}
	rn := &echo{}
	j2, err := Prepare(Launch{Script: mustParse(t, src), Root: root, Runner: rn, ResumeFrom: j1.ID})
	if err != nil {
		t.Fatal(err)
	}
	info, res, err := j2.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if rn.runs.Load() != 1 || info.Cached != 1 || string(res.Value) != `"first / done: two"` {
		t.Errorf("resume: %d runs, %d cached, value %s; want 1, 1", rn.runs.Load(), info.Cached, res.Value)
	}
	// The resumed run's journal is whole: resuming it runs nothing.
	rn3 := &echo{}
	j3, _ := Prepare(Launch{Script: mustParse(t, src), Root: root, Runner: rn3, ResumeFrom: j2.ID})
	if _, _, err := j3.Run(t.Context()); err != nil || rn3.runs.Load() != 0 {
		t.Errorf("second resume: %v, %d runs; want none", err, rn3.runs.Load())
	}
	if _, err := Prepare(Launch{Script: mustParse(t, src), Root: root, Runner: rn, ResumeFrom: "wf_nope"}); !errors.Is(err, ErrNoRun) {
		t.Errorf("resume of an unknown run = %v; want ErrNoRun", err)
	}
}
