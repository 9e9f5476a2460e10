package nats_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/remote"
	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/task"
)

// LastEvent finds a job by its newest event (EventSubmitted before a
// worker takes it, the result after), ErrUnknownJob for a job the queue
// never had; a second lead on another connection takes a finished job up
// with Reattach and gets its result.
func TestJobsLastEvent(t *testing.T) {
	ts := startServer(t, "")
	_, j := openJobs(t, ts, "recall")
	if _, err := j.LastEvent(t.Context(), "r00000000"); !errors.Is(err, remote.ErrUnknownJob) {
		t.Errorf("LastEvent(never submitted) = %v; want ErrUnknownJob", err)
	}
	release := make(chan struct{})
	startWorker(t, j, remote.WorkerConfig{Name: "w1", Run: func(ctx context.Context, job remote.Job, _ func(string, remote.Usage)) remote.Result {
		<-release
		return remote.Result{Text: "did " + job.Prompt}
	}})
	c, _ := leadClient(t, j, remote.OnLostFail)
	st, err := c.Submit(t.Context(), remote.Request{Description: "d", Prompt: "work"})
	if err != nil {
		t.Fatal(err)
	}
	waitJobEvent(t, j, string(st.ID), func(k remote.EventKind) bool { return k == remote.EventSubmitted || k == remote.EventStarted })
	close(release)
	waitJobEvent(t, j, string(st.ID), func(k remote.EventKind) bool { return k == remote.EventResult })
	c.Close()

	_, j2 := openJobs(t, ts, "recall")
	c2, sub2 := leadClient(t, j2, remote.OnLostFail)
	if _, err := c2.Reattach(t.Context(), remote.Job{ID: string(st.ID), Description: "d", MaxAttempts: 1}); err != nil {
		t.Fatalf("Reattach = %v", err)
	}
	if ev := waitNotification(t, sub2, st.ID); ev.State.Status != task.Completed || !strings.Contains(ev.Notification, "<result>did work</result>") {
		t.Errorf("reattached job: %s\n%s", ev.State.Status, ev.Notification)
	}
}

// waitJobEvent waits until the newest event of job id is of a kind ok
// accepts.
func waitJobEvent(t *testing.T, j interface {
	LastEvent(context.Context, string) (remote.Event, error)
}, id string, ok func(remote.EventKind) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		ev, err := j.LastEvent(ctx, id)
		if err == nil && ok(ev.Kind) {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("job %s: newest event %+v, %v", id, ev, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// BenchmarkJobSubmit is a lead's Client.Submit on one server: the live
// worker check, the watch, EventSubmitted and the job itself (the worker
// is there only to be alive: it takes no job).
func BenchmarkJobSubmit(b *testing.B) {
	ts := startServer(b, "")
	s := ts.open(b, natsstore.Options{Namespace: "bsubmit"})
	j, err := s.Jobs(b.Context(), jobOpts)
	if err != nil {
		b.Fatal(err)
	}
	if err := j.Register(b.Context(), remote.WorkerInfo{Name: "idle", Labels: []string{"never"}, Capacity: 1, Seen: time.Now()}); err != nil {
		b.Fatal(err)
	}
	reg := task.New(task.Config{PollInterval: -1})
	defer reg.Close(context.Background())
	c, err := remote.NewClient(remote.ClientConfig{Queue: j, Workers: j, Tasks: reg, CheckEvery: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for b.Loop() {
		if _, err := c.Submit(b.Context(), remote.Request{Description: "d", Prompt: "p", Labels: []string{"never"}}); err != nil {
			b.Fatal(err)
		}
	}
}
