package nats_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/troupe-dev/troupe/remote"
	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/task"
)

var jobOpts = natsstore.JobOptions{HeartbeatTimeout: time.Second, WorkerTTL: time.Second}

const jobBeat = 100 * time.Millisecond

func openJobs(t *testing.T, ts *testServer, ns string) (*natsstore.Store, *natsstore.Jobs) {
	t.Helper()
	s := ts.open(t, natsstore.Options{Namespace: ns})
	j, err := s.Jobs(t.Context(), jobOpts)
	if err != nil {
		t.Fatalf("Jobs: %v", err)
	}
	return s, j
}

// startWorker runs a worker on its own connection; stop cancels it and
// waits.
func startWorker(t *testing.T, j *natsstore.Jobs, cfg remote.WorkerConfig) (stop func()) {
	t.Helper()
	cfg.Queue, cfg.Registry, cfg.Heartbeat = j, j, jobBeat
	w, err := remote.NewWorker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if ok, _ := remote.Alive(t.Context(), j, cfg.Name); ok {
			return stop
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker %s never registered", cfg.Name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func leadClient(t *testing.T, j *natsstore.Jobs, policy remote.Policy) (*remote.Client, *task.Subscription) {
	t.Helper()
	reg := task.New(task.Config{PollInterval: -1})
	sub := reg.Subscribe()
	c, err := remote.NewClient(remote.ClientConfig{Queue: j, Workers: j, Tasks: reg, OnLost: policy, CheckEvery: jobBeat})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); reg.Close(context.Background()) })
	return c, sub
}

func waitNotification(t *testing.T, sub *task.Subscription, id task.ID) task.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("no notification for %s: %v", id, err)
		}
		if ev.State.ID == id && ev.Kind == task.EventTerminated && ev.Notification != "" {
			return ev
		}
	}
}

func TestJobsEndToEnd(t *testing.T) {
	ts := startServer(t, "")
	ns := "jobs1"
	_, lead := openJobs(t, ts, ns)
	_, wconn := openJobs(t, ts, ns)
	startWorker(t, wconn, remote.WorkerConfig{Name: "w1", Labels: []string{"gpu"}, Capacity: 2,
		Run: func(_ context.Context, j remote.Job, progress func(string, remote.Usage)) remote.Result {
			progress("thinking", remote.Usage{TotalTokens: 5})
			return remote.Result{Text: "answer to " + j.Prompt, Usage: remote.Usage{TotalTokens: 12, ToolUses: 1}}
		}})
	c, sub := leadClient(t, lead, remote.OnLostFail)
	st, err := c.Submit(t.Context(), remote.Request{Description: "q", Prompt: "question", Labels: []string{"gpu"}})
	if err != nil {
		t.Fatal(err)
	}
	ev := waitNotification(t, sub, st.ID)
	if ev.State.Status != task.Completed || !strings.Contains(ev.Notification, "<result>answer to question</result>") ||
		!strings.Contains(ev.Notification, "<total_tokens>12</total_tokens>") {
		t.Fatalf("%s\n%s", ev.State.Status, ev.Notification)
	}
	if d, _ := task.DetailAs[*task.Remote](ev.State); d.Progress != "thinking" || d.Worker != "w1" {
		t.Errorf("detail %+v", d)
	}
	// A submit retried with the same id is stored once (no worker here
	// takes it).
	_, idle := openJobs(t, ts, "jobs1idle")
	job := remote.Job{ID: "dup1", Prompt: "p", MaxAttempts: 1}
	for range 2 {
		if err := idle.Submit(t.Context(), job); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := idle.ConsumerPending(t.Context()); err != nil || n != 1 {
		t.Errorf("queue holds %d jobs (%v) after a submit retried once, want 1", n, err)
	}
	if err := lead.Submit(t.Context(), remote.Job{ID: "a.b", Prompt: "p", MaxAttempts: 1}); !errors.Is(err, remote.ErrBadJob) {
		t.Errorf("Submit of a bad id: %v", err)
	}
}

// TestJobsLostWorker kills a worker's connection mid-job: with policy
// requeue the job runs once more on another worker; with policy fail the
// task fails and the redelivered job is dropped unrun.
func TestJobsLostWorker(t *testing.T) {
	ts := startServer(t, "")
	for _, policy := range []remote.Policy{remote.OnLostRequeue, remote.OnLostFail} {
		t.Run(string(policy), func(t *testing.T) {
			ns := "lost" + string(policy)
			_, lead := openJobs(t, ts, ns)
			deadStore, dead := openJobs(t, ts, ns)
			started := make(chan string, 4)
			var runs atomic.Int32
			run := func(name string, block bool) remote.RunFunc {
				return func(ctx context.Context, j remote.Job, _ func(string, remote.Usage)) remote.Result {
					runs.Add(1)
					started <- name
					if block {
						select {
						case <-ctx.Done():
						case <-t.Context().Done():
						}
					}
					return remote.Result{Text: "done by " + name}
				}
			}
			startWorker(t, dead, remote.WorkerConfig{Name: "doomed", Run: run("doomed", true)})
			c, sub := leadClient(t, lead, policy)
			st, err := c.Submit(t.Context(), remote.Request{Description: "long", Prompt: "p"})
			if err != nil {
				t.Fatal(err)
			}
			<-started
			deadStore.Close() // the worker's connection is gone: no heartbeats
			_, alive := openJobs(t, ts, ns)
			startWorker(t, alive, remote.WorkerConfig{Name: "survivor", Run: run("survivor", false)})
			ev := waitNotification(t, sub, st.ID)
			switch policy {
			case remote.OnLostRequeue:
				if ev.State.Status != task.Completed || !strings.Contains(ev.Notification, "done by survivor") {
					t.Fatalf("%s\n%s\nruns %d", ev.State.Status, ev.Notification, runs.Load())
				}
			case remote.OnLostFail:
				if ev.State.Status != task.Failed || !strings.Contains(ev.Notification, "lost") {
					t.Fatalf("%s\n%s\nruns %d", ev.State.Status, ev.Notification, runs.Load())
				}
				// The redelivery reaches the survivor, which drops it unrun.
				deadline := time.Now().Add(15 * time.Second)
				for {
					info, err := alive.ConsumerPending(t.Context())
					if err != nil {
						t.Fatal(err)
					}
					if info == 0 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%d jobs still pending", info)
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
			if n := runs.Load(); n != int32(policy.MaxAttempts()) {
				t.Errorf("the agent ran %d times, want %d", n, policy.MaxAttempts())
			}
		})
	}
}

func FuzzDecodeJob(f *testing.F) {
	f.Add([]byte(`{"id":"r1","prompt":"p","max_attempts":1}`))
	f.Add([]byte(`{"id":"r1","prompt":"p","max_attempts":0}`))
	f.Add([]byte(`{"id":"a.b","prompt":"p","labels":["x y"]}`))
	f.Add([]byte(`{"kind":"result","job_id":"r1","result":{"text":"t"}}`))
	f.Add([]byte(`nope`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if j, err := natsstore.DecodeJob(data); err == nil {
			if err := j.Validate(); err != nil {
				t.Fatalf("DecodeJob accepted an invalid job: %v", err)
			}
		}
		if e, err := natsstore.DecodeEvent(data, "r1"); err == nil {
			if e.JobID != "r1" || (e.Kind == remote.EventResult && e.Result == nil) {
				t.Fatalf("DecodeEvent accepted %+v", e)
			}
		}
	})
}

// TestJobsAfterClose: every queue and registry call on a closed store
// fails with remote.ErrClosed, not a connection error.
func TestJobsAfterClose(t *testing.T) {
	ts := startServer(t, "")
	s, j := openJobs(t, ts, "jobsclosed")
	s.Close()
	ctx := t.Context()
	_, watchErr := j.Watch(ctx, "r1")
	_, listErr := j.List(ctx)
	_, takeErr := j.Take(ctx)
	for name, err := range map[string]error{
		"Submit":     j.Submit(ctx, remote.Job{ID: "r1", Prompt: "p", MaxAttempts: 1}),
		"Publish":    j.Publish(ctx, remote.Event{Kind: remote.EventProgress, JobID: "r1"}),
		"Watch":      watchErr,
		"Take":       takeErr,
		"Register":   j.Register(ctx, remote.WorkerInfo{Name: "w1"}),
		"Deregister": j.Deregister(ctx, "w1"),
		"List":       listErr,
	} {
		if !errors.Is(err, remote.ErrClosed) {
			t.Errorf("%s after Close error = %v; want remote.ErrClosed", name, err)
		}
	}
	if _, err := s.Jobs(ctx, jobOpts); !errors.Is(err, remote.ErrClosed) {
		t.Errorf("Jobs after Close error = %v; want remote.ErrClosed", err)
	}
}

// TestJobsResultTooLarge: a result larger than the server's max_payload
// fails the lead's task with the reason instead of leaving it running.
func TestJobsResultTooLarge(t *testing.T) {
	ts := startServer(t, "")
	ns := "jobsbig"
	_, lead := openJobs(t, ts, ns)
	_, wconn := openJobs(t, ts, ns)
	startWorker(t, wconn, remote.WorkerConfig{Name: "w1",
		Run: func(context.Context, remote.Job, func(string, remote.Usage)) remote.Result {
			return remote.Result{Text: strings.Repeat("x", 2<<20), Usage: remote.Usage{TotalTokens: 3}}
		}})
	c, sub := leadClient(t, lead, remote.OnLostFail)
	st, err := c.Submit(t.Context(), remote.Request{Description: "big", Prompt: "write a lot"})
	if err != nil {
		t.Fatal(err)
	}
	ev := waitNotification(t, sub, st.ID)
	if ev.State.Status != task.Failed || !strings.Contains(ev.Notification, "larger than") {
		t.Fatalf("task with an oversized result: %s\n%s", ev.State.Status, ev.Notification)
	}
}

// TestJobsRefusesForeignStreams: a stream or bucket under a jobs name that
// troupe did not make is refused, naming it, and left as it was.
func TestJobsRefusesForeignStreams(t *testing.T) {
	ts := startServer(t, "")
	raw := rawJS(t, ts)
	ctx := t.Context()
	if _, err := raw.CreateStream(ctx, jetstream.StreamConfig{Name: "foreign_v1_jobs", Subjects: []string{"elsewhere.jobs"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "alien_v1_workers", Metadata: map[string]string{"troupe_schema": "2"}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ ns, want string }{
		{"foreign", "stream foreign_v1_jobs"},
		{"alien", "bucket alien_v1_workers"},
	} {
		s := ts.open(t, natsstore.Options{Namespace: tt.ns})
		if _, err := s.Jobs(ctx, jobOpts); err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "not troupe's schema") {
			t.Errorf("Jobs in namespace %s error = %v; want one naming %s as not troupe's", tt.ns, err, tt.want)
		}
	}
	str, err := raw.Stream(ctx, "foreign_v1_jobs")
	if err != nil {
		t.Fatal(err)
	}
	if got := str.CachedInfo().Config.Subjects; len(got) != 1 || got[0] != "elsewhere.jobs" {
		t.Errorf("the foreign stream was reconfigured: subjects %q", got)
	}
}
