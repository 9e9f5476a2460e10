package kit_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/task"
)

// TestStopRemoteJobs stops every remote job still pending or running at a
// session limit, through the job's own kill, and leaves other tasks and
// finished jobs alone.
func TestStopRemoteJobs(t *testing.T) {
	ctx := t.Context()
	reg := task.New(task.Config{Dir: t.TempDir(), PollInterval: -1})
	t.Cleanup(func() { reg.Close(context.Background()) })
	var kills atomic.Int32
	kill := func(context.Context, task.State) error { kills.Add(1); return nil }
	register := func(s task.State) task.State {
		t.Helper()
		st, err := reg.Register(s, kill)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	pending := register(task.State{Type: task.RemoteAgent, Status: task.Pending, Description: "queued job"})
	running := register(task.State{Type: task.RemoteAgent, Status: task.Running, Description: "running job"})
	done := register(task.State{Type: task.RemoteAgent, Status: task.Completed, Description: "finished job"})
	agent := register(task.State{Type: task.LocalAgent, Status: task.Running, Description: "a sub-agent here"})

	kit.StopRemoteJobs(ctx, reg)

	for _, c := range []struct {
		st   task.State
		want task.Status
	}{{pending, task.Killed}, {running, task.Killed}, {done, task.Completed}, {agent, task.Running}} {
		if got, _ := reg.Get(c.st.ID); got.Status != c.want {
			t.Errorf("%s (%s) is %s; want %s", c.st.Description, c.st.ID, got.Status, c.want)
		}
	}
	if n := kills.Load(); n != 2 {
		t.Errorf("%d kills; want the two live jobs'", n)
	}
}
