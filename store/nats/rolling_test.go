package nats_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/remote"
	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tasklist"
)

// TestClusterRollingRestart restarts the three servers one after another
// (leaders moved off each first, as in a rolling upgrade) while messages
// are sent, tasks created and claimed, and remote jobs submitted and run
// without pause. Every acknowledged message is in the inbox once and in
// order, every created task is claimed once, and every job ends with one
// notification.
func TestClusterRollingRestart(t *testing.T) {
	c := startCluster(t)
	const ns = "rolling"
	opts := natsstore.Options{
		Namespace:        ns,
		SendTimeout:      time.Minute,
		RequestTimeout:   time.Minute,
		MaxReconnectWait: 200 * time.Millisecond,
		Logger:           slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	open := func() *natsstore.Store {
		s, err := natsstore.Open(t.Context(), c.urls(), opts)
		if err != nil {
			t.Fatalf("Open(%s) error: %v", c.urls(), err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	jobsOf := func(s *natsstore.Store) *natsstore.Jobs {
		j, err := s.Jobs(t.Context(), natsstore.JobOptions{HeartbeatTimeout: 2 * time.Second, WorkerTTL: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	sender, reader := open(), open()
	newCrew(t, sender)
	ctx := t.Context()
	l := tasklist.New(sender.Tasks(), "crew")
	leadJobs := jobsOf(sender)
	startWorker(t, jobsOf(open()), remote.WorkerConfig{Name: "w1", Capacity: 4,
		Run: func(context.Context, remote.Job, func(string, remote.Usage)) remote.Result {
			return remote.Result{Text: "done"}
		}})
	lead, sub := leadClient(t, leadJobs, remote.OnLostFail)

	stop := make(chan struct{})
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	var ids []string // acknowledged sends, in order
	wg.Go(func() {
		for i := 0; !stopped(); i++ {
			d, err := sender.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: fmt.Sprint(i)})
			if err != nil {
				errs <- fmt.Errorf("Send #%d: %w", i, err)
				return
			}
			ids = append(ids, d[0].ID)
		}
	})
	var created atomic.Int64
	wg.Go(func() {
		for !stopped() {
			if _, err := l.Create(ctx, tasklist.Draft{Subject: "t"}); err != nil {
				errs <- fmt.Errorf("Create task: %w", err)
				return
			}
			created.Add(1)
			time.Sleep(30 * time.Millisecond)
		}
	})
	var mu sync.Mutex
	owners := map[string][]string{}
	claimers := make(chan struct{}) // closed when the claimers may stop at an empty list
	var cwg sync.WaitGroup
	for w := range 3 {
		agent := fmt.Sprint("worker", w)
		cl := tasklist.New(open().Tasks(), "crew")
		cwg.Go(func() {
			for {
				task, err := cl.Claim(ctx, agent)
				if errors.Is(err, tasklist.ErrNoneReady) {
					select {
					case <-claimers:
						return
					case <-time.After(5 * time.Millisecond):
						continue
					}
				}
				if err != nil {
					errs <- fmt.Errorf("Claim(%s): %w", agent, err)
					return
				}
				mu.Lock()
				owners[task.ID] = append(owners[task.ID], agent)
				mu.Unlock()
			}
		})
	}
	var submitted []task.ID
	wg.Go(func() {
		for !stopped() {
			st, err := lead.Submit(ctx, remote.Request{Description: "j", Prompt: "p"})
			if err != nil {
				errs <- fmt.Errorf("Submit job: %w", err)
				return
			}
			submitted = append(submitted, st.ID)
			time.Sleep(50 * time.Millisecond)
		}
	})

	start := time.Now()
	for _, n := range c.nodes {
		time.Sleep(300 * time.Millisecond)
		for _, st := range []string{ns + "_v1_mail", "KV_" + ns + "_v1_tasks", ns + "_v1_jobs", "KV_" + ns + "_v1_workers", "KV_" + ns + "_v1_teams"} {
			c.moveLeaderOff(t, st, n)
		}
		n.stop()
		time.Sleep(300 * time.Millisecond)
		c.start(t, n)
		c.waitCurrent(t, ns+"_v1_mail")
		c.waitCurrent(t, "KV_"+ns+"_v1_tasks")
	}
	t.Logf("rolling restart of 3 servers took %v", time.Since(start).Round(time.Millisecond))
	close(stop)
	wg.Wait()
	t.Logf("workload stopped %v after the start", time.Since(start).Round(time.Millisecond))
	close(claimers)
	cwg.Wait()
	t.Logf("claims drained %v after the start", time.Since(start).Round(time.Millisecond))
	close(errs)
	for err := range errs {
		t.Errorf("%v (want every operation to survive a rolling restart)", err)
	}

	got, err := reader.Mail().Read(ctx, "crew", "bob", false)
	if err != nil {
		t.Fatalf("Read(bob) error: %v", err)
	}
	if len(got) != len(ids) {
		t.Errorf("Read(bob) = %d messages; want %d acknowledged (lost or duplicated)", len(got), len(ids))
	}
	for i, m := range got {
		if i < len(ids) && (m.Text != fmt.Sprint(i) || m.ID != ids[i]) {
			t.Fatalf("message %d = {%q, %s}; want {%q, %s}: lost, duplicated or reordered", i, m.Text, m.ID, fmt.Sprint(i), ids[i])
		}
	}
	final, err := l.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(final)) != created.Load() {
		var ids []string
		for _, tk := range final {
			ids = append(ids, tk.ID)
		}
		t.Errorf("task list holds %d tasks (ids %v); want the %d acknowledged", len(final), ids, created.Load())
	}
	for _, tk := range final {
		if who := owners[tk.ID]; len(who) != 1 || tk.Owner != who[0] {
			t.Errorf("task %s: owner %q, claimed by %q; want claimed once by its owner", tk.ID, tk.Owner, who)
		}
	}
	ended := map[task.ID]task.Status{}
	for len(ended) < len(submitted) {
		nctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		ev, err := sub.Next(nctx)
		cancel()
		if err != nil {
			t.Fatalf("%d of %d jobs ended: %v", len(ended), len(submitted), err)
		}
		if ev.Kind != task.EventTerminated || ev.Notification == "" {
			continue
		}
		if _, dup := ended[ev.State.ID]; dup {
			t.Errorf("job %s ended twice", ev.State.ID)
		}
		ended[ev.State.ID] = ev.State.Status
	}
	t.Logf("jobs ended %v after the start", time.Since(start).Round(time.Millisecond))
	failed := 0
	for _, st := range ended {
		if st != task.Completed {
			failed++
		}
	}
	t.Logf("%d messages, %d tasks claimed, %d jobs (%d failed, reported) across the restarts", len(ids), len(final), len(submitted), failed)
}
