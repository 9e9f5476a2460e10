package remote_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/troupe-dev/troupe/remote"
	"github.com/troupe-dev/troupe/task"
)

// secondLead is a lead started again on the same queue: a fresh registry
// and client, as a resumed session has.
func (e *env) secondLead(t *testing.T) (*remote.Client, *task.Registry, *task.Subscription) {
	t.Helper()
	reg := task.New(task.Config{PollInterval: -1})
	sub := reg.Subscribe()
	conn := e.mem.Conn()
	c, err := remote.NewClient(remote.ClientConfig{Queue: conn, Workers: conn, Tasks: reg, SubmittedBy: "lead2", CheckEvery: heartbeat})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		reg.Close(context.Background())
	})
	return c, reg, sub
}

// notified waits for the notification of task id on sub.
func notified(t *testing.T, sub *task.Subscription, id task.ID) task.Event {
	t.Helper()
	for {
		ev, err := sub.Next(t.Context())
		if err != nil {
			t.Fatalf("waiting for the notification of %s: %v", id, err)
		}
		if ev.State.ID == id && ev.Kind == task.EventTerminated && ev.Notification != "" {
			return ev
		}
	}
}

// A lead that went away (its client closed, its tasks left as they were)
// is started again: a job still running, one still queued and one that
// ended meanwhile are each taken up by Reattach and end in a notification
// with their result; a job the queue holds nothing of is ErrUnknownJob.
func TestReattach(t *testing.T) {
	e := newEnv(t, remote.OnLostFail)
	var submitted []remote.Job
	var mu sync.Mutex
	release := make(chan struct{})
	started := make(chan string, 4)
	e.worker(t, remote.WorkerConfig{Name: "w1", Capacity: 2, Labels: []string{"gpu"},
		Run: func(ctx context.Context, j remote.Job, _ func(string, remote.Usage)) remote.Result {
			started <- j.Prompt
			if j.Prompt == "slow" {
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			return remote.Result{Text: "did " + j.Prompt}
		}})
	e.client.Close() // the first lead's client: replaced below with one that records
	reg1 := task.New(task.Config{PollInterval: -1})
	defer reg1.Close(context.Background())
	conn := e.mem.Conn()
	c1, err := remote.NewClient(remote.ClientConfig{Queue: conn, Workers: conn, Tasks: reg1, SubmittedBy: "lead1", CheckEvery: heartbeat,
		OnSubmit: func(j remote.Job) { mu.Lock(); submitted = append(submitted, j); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	slow, err := c1.Submit(t.Context(), remote.Request{Description: "slow one", Prompt: "slow", Labels: []string{"gpu"}})
	if err != nil {
		t.Fatal(err)
	}
	quick, err := c1.Submit(t.Context(), remote.Request{Description: "quick one", Prompt: "quick"})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		<-started
	}
	// The first lead ends without a word (a crash): its tracking stops.
	c1.Close()
	mu.Lock()
	if len(submitted) != 2 || submitted[0].ID != string(slow.ID) || submitted[0].Labels[0] != "gpu" || submitted[0].MaxAttempts != 1 {
		t.Errorf("OnSubmit heard %+v; want the two jobs in order, with their labels and attempts", submitted)
	}
	mu.Unlock()
	waitFor(t, "the quick job's result", func() bool {
		ev, err := conn.LastEvent(t.Context(), string(quick.ID))
		return err == nil && ev.Kind == remote.EventResult
	})

	c2, reg2, sub2 := e.secondLead(t)
	// Neither the prompt nor the lead's tool-use id survive in a record:
	// the id, description, labels and attempts do.
	st, err := c2.Reattach(t.Context(), remote.Job{ID: string(slow.ID), Description: "slow one", Labels: []string{"gpu"}, MaxAttempts: 1})
	if err != nil || st.Status != task.Pending {
		t.Fatalf("Reattach(running job) = %+v, %v", st, err)
	}
	if _, err := c2.Reattach(t.Context(), remote.Job{ID: string(slow.ID), MaxAttempts: 1}); err == nil || !strings.Contains(err.Error(), "already in the registry") {
		t.Errorf("Reattach twice = %v; want it refused", err)
	}
	qst, err := c2.Reattach(t.Context(), remote.Job{ID: string(quick.ID), Description: "quick one", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ev := notified(t, sub2, qst.ID); ev.State.Status != task.Completed || !strings.Contains(ev.Notification, "<result>did quick</result>") {
		t.Errorf("the job that ended while no lead watched: %s\n%s", ev.State.Status, ev.Notification)
	}
	close(release)
	if ev := notified(t, sub2, st.ID); ev.State.Status != task.Completed || !strings.Contains(ev.Notification, "<result>did slow</result>") {
		t.Errorf("the job that ran on: %s\n%s", ev.State.Status, ev.Notification)
	}
	if d, _ := task.DetailAs[*task.Remote](mustGet(t, reg2, st.ID)); d.Worker != "w1" {
		t.Errorf("reattached detail %+v; want the worker from the replayed events", d)
	}

	_, err = c2.Reattach(t.Context(), remote.Job{ID: string(task.NewID(task.RemoteAgent)), MaxAttempts: 1})
	if !errors.Is(err, remote.ErrUnknownJob) {
		t.Errorf("Reattach(a job the queue never had) = %v; want ErrUnknownJob", err)
	}
	for _, bad := range []string{"a1234567", "r../x", ""} {
		if _, err := c2.Reattach(t.Context(), remote.Job{ID: bad}); !errors.Is(err, remote.ErrBadJob) {
			t.Errorf("Reattach(%q) = %v; want ErrBadJob", bad, err)
		}
	}
}

// A job still waiting in the queue (its only worker busy) is found by
// its EventSubmitted, taken up, and runs when the worker is free.
func TestReattachQueued(t *testing.T) {
	e := newEnv(t, remote.OnLostFail)
	release := make(chan struct{})
	started := make(chan string, 2)
	e.worker(t, remote.WorkerConfig{Name: "only", Capacity: 1, Run: func(ctx context.Context, j remote.Job, _ func(string, remote.Usage)) remote.Result {
		started <- j.Prompt
		if j.Prompt == "block" {
			<-release
		}
		return remote.Result{Text: "did " + j.Prompt}
	}})
	e.submit(t, remote.Request{Prompt: "block"})
	if p := <-started; p != "block" {
		t.Fatalf("started %q first", p)
	}
	st := e.submit(t, remote.Request{Prompt: "queued work"})
	waitFor(t, "the queued job's submitted event", func() bool {
		ev, err := e.mem.Conn().LastEvent(t.Context(), string(st.ID))
		return err == nil && ev.Kind == remote.EventSubmitted
	})
	e.client.Close()
	c2, _, sub2 := e.secondLead(t)
	if _, err := c2.Reattach(t.Context(), remote.Job{ID: string(st.ID), MaxAttempts: 1}); err != nil {
		t.Fatalf("Reattach(queued job) = %v", err)
	}
	close(release)
	if ev := notified(t, sub2, st.ID); !strings.Contains(ev.Notification, "<result>did queued work</result>") {
		t.Errorf("queued job after reattach:\n%s", ev.Notification)
	}
}

func mustGet(t *testing.T, reg *task.Registry, id task.ID) task.State {
	t.Helper()
	st, ok := reg.Get(id)
	if !ok {
		t.Fatalf("task %s not in the registry", id)
	}
	return st
}
