package nats_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
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

// streamReplicas returns the configured replica count of each stream.
func streamReplicas(t *testing.T, url string, streams ...string) map[string]int {
	t.Helper()
	js := jetStream(t, url)
	got := map[string]int{}
	for _, name := range streams {
		str, err := js.Stream(t.Context(), name)
		if err != nil {
			t.Fatalf("stream %s: %v", name, err)
		}
		got[name] = str.CachedInfo().Config.Replicas
	}
	return got
}

func troupeStreams(ns string) []string {
	return []string{ns + "_v1_mail", "KV_" + ns + "_v1_teams", "KV_" + ns + "_v1_tasks", "KV_" + ns + "_v1_mailread"}
}

// TestClusterReplicas: on a three-node cluster, new streams get three
// replicas by default; an existing count is kept on a default open and
// changed only when a count is asked for.
func TestClusterReplicas(t *testing.T) {
	c := startCluster(t)
	open := func(ns string, replicas int) *natsstore.Store {
		s, err := natsstore.Open(t.Context(), c.urls(), natsstore.Options{Namespace: ns, Replicas: replicas})
		if err != nil {
			t.Fatalf("Open(%s, replicas %d) error: %v", ns, replicas, err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	check := func(ns string, want int) {
		t.Helper()
		for name, got := range streamReplicas(t, c.urls(), troupeStreams(ns)...) {
			if got != want {
				t.Errorf("stream %s has %d replicas; want %d", name, got, want)
			}
		}
	}
	if s := open("auto", 0); s.Replicas() != 3 {
		t.Errorf("Replicas() on a 3-node cluster = %d; want 3", s.Replicas())
	}
	check("auto", 3)

	open("grow", 1)
	check("grow", 1)
	open("grow", 0) // a default open keeps what exists
	check("grow", 1)
	open("grow", 3) // asked: changed
	check("grow", 3)

	if _, err := natsstore.Open(t.Context(), c.urls(), natsstore.Options{Namespace: "toomany", Replicas: 5}); err == nil {
		t.Error("Open with 5 replicas on 3 servers succeeded; want an error")
	} else {
		t.Logf("Open with 5 replicas on 3 servers: %v", err)
	}
}

// TestClusterLeaderLoss kills the server that leads every stream (mail,
// task list, remote jobs) while a sender sends, four claimers drain a task
// list and a lead submits remote jobs to a worker, on
// stores that know every server's URL. Every acknowledged message is in
// the inbox exactly once and in order, every task is claimed by exactly
// one claimer, every job ends once (done or reported failed), the watches started before the loss still fire after it,
// and the killed server restarts and catches up.
func TestClusterLeaderLoss(t *testing.T) {
	c := startCluster(t)
	const ns = "fault"
	var logs lockedBuffer
	opts := natsstore.Options{
		Namespace:        ns,
		SendTimeout:      time.Minute,
		RequestTimeout:   time.Minute,
		MaxReconnectWait: 200 * time.Millisecond,
		Logger:           slog.New(slog.NewTextHandler(&logs, nil)),
	}
	open := func() *natsstore.Store {
		s, err := natsstore.Open(t.Context(), c.urls(), opts)
		if err != nil {
			t.Fatalf("Open(%s) error: %v", c.urls(), err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	sender, reader := open(), open()
	newCrew(t, sender)
	ctx := t.Context()

	const total, tasks, claimers = 1000, 200, 4
	l := tasklist.New(sender.Tasks(), "crew")
	for i := range tasks {
		if _, err := l.Create(ctx, tasklist.Draft{Subject: fmt.Sprint("task ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	jobsOf := func(s *natsstore.Store) *natsstore.Jobs {
		j, err := s.Jobs(ctx, natsstore.JobOptions{HeartbeatTimeout: 10 * time.Second, WorkerTTL: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	leadJobs := jobsOf(sender)
	const heldJobs = 4 // the worker's capacity
	var running atomic.Int64
	killing := make(chan struct{})
	startWorker(t, jobsOf(open()), remote.WorkerConfig{Name: "w1", Capacity: 4,
		Log: func(s string) { fmt.Fprintf(&logs, "worker w1: %s\n", s) },
		Run: func(context.Context, remote.Job, func(string, remote.Usage)) remote.Result {
			// The first jobs are held until the kill, so that results
			// are published while the jobs' streams have no leader.
			if running.Add(1) <= heldJobs {
				<-killing
			}
			time.Sleep(20 * time.Millisecond)
			return remote.Result{Text: "done"}
		}})
	lead, jobEvents := leadClient(t, leadJobs, remote.OnLostFail)

	// Every leader on one server, so that one kill takes them all.
	victim := c.streamLeader(t, ns+"_v1_mail")
	for _, st := range []string{"KV_" + ns + "_v1_tasks", ns + "_v1_jobs", ns + "_v1_jobevents", "KV_" + ns + "_v1_workers", "KV_" + ns + "_v1_jobruns"} {
		c.moveLeader(t, st, victim)
	}

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mailKicks, err := reader.Mail().Watch(wctx, "crew", "bob")
	if err != nil {
		t.Fatal(err)
	}
	taskKicks, err := reader.Tasks().Watch(wctx, "crew")
	if err != nil {
		t.Fatal(err)
	}

	var acked, claimed atomic.Int64
	ids := make([]string, total)
	var wg sync.WaitGroup
	errs := make(chan error, claimers+2)
	wg.Go(func() {
		for i := range total {
			d, err := sender.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: fmt.Sprint(i)})
			if err != nil {
				errs <- fmt.Errorf("Send #%d: %w", i, err)
				return
			}
			ids[i] = d[0].ID
			acked.Add(1)
		}
	})
	var submitted []task.ID
	var nsubmitted atomic.Int64
	wg.Go(func() {
		for range 40 {
			st, err := lead.Submit(ctx, remote.Request{Description: "j", Prompt: "p"})
			if err != nil {
				errs <- fmt.Errorf("Submit job: %w", err)
				return
			}
			submitted = append(submitted, st.ID)
			nsubmitted.Add(1)
			time.Sleep(25 * time.Millisecond)
		}
	})
	// The claimers take a quarter of the tasks, then hold the rest back
	// until the kill begins, so that claims are in flight across it; the
	// worker holds its first jobs likewise.
	var mu sync.Mutex
	owners := map[string][]string{} // task id -> every claimer that was told it got it
	for w := range claimers {
		agent := fmt.Sprint("worker", w)
		cl := tasklist.New(open().Tasks(), "crew")
		wg.Go(func() {
			for {
				task, err := cl.Claim(ctx, agent)
				if errors.Is(err, tasklist.ErrNoneReady) {
					return
				}
				if err != nil {
					errs <- fmt.Errorf("Claim(%s): %w", agent, err)
					return
				}
				mu.Lock()
				owners[task.ID] = append(owners[task.ID], agent)
				mu.Unlock()
				if claimed.Add(1) >= tasks/4 {
					<-killing
				}
			}
		})
	}

	deadline := time.Now().Add(time.Minute)
	for acked.Load() < total/3 || claimed.Load() < tasks/4 || running.Load() < heldJobs {
		if time.Now().After(deadline) {
			t.Fatalf("only %d sends, %d claims and %d jobs running within a minute", acked.Load(), claimed.Load(), running.Load())
		}
		time.Sleep(time.Millisecond)
	}
	killedAt := time.Now()
	t.Logf("killing %s (leader of every stream) after %d sends, %d claims and %d job submits", victim.name, acked.Load(), claimed.Load(), nsubmitted.Load())
	close(killing)
	victim.stop()
	wg.Wait()
	t.Logf("workload done %v after the kill", time.Since(killedAt).Round(time.Millisecond))
	close(errs)
	for err := range errs {
		t.Errorf("%v (want every operation to survive the loss of one server)", err)
	}

	got, err := reader.Mail().Read(ctx, "crew", "bob", false)
	if err != nil {
		t.Fatalf("Read(bob) error: %v", err)
	}
	if len(got) != total {
		t.Errorf("Read(bob) = %d messages; want %d (lost or duplicated)", len(got), total)
	}
	for i, m := range got {
		if i < total && (m.Text != fmt.Sprint(i) || m.ID != ids[i]) {
			t.Fatalf("message %d = {%q, %s}; want {%q, %s}: lost, duplicated or reordered", i, m.Text, m.ID, fmt.Sprint(i), ids[i])
		}
	}
	final, err := l.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range final {
		who := owners[task.ID]
		if len(who) != 1 || task.Owner != who[0] || task.Status != tasklist.StatusInProgress {
			t.Errorf("task %s: owner %q status %s, claimed by %q; want claimed once by its owner", task.ID, task.Owner, task.Status, who)
		}
	}
	if len(owners) != tasks {
		t.Errorf("%d tasks claimed; want %d", len(owners), tasks)
	}

	// The watches started before the loss fire for changes after it.
	drain(mailKicks)
	drain(taskKicks)
	if _, err := sender.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: "after"}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Create(ctx, tasklist.Draft{Subject: "after"}); err != nil {
		t.Fatal(err)
	}
	waitKick(t, mailKicks, "inbox watch")
	waitKick(t, taskKicks, "task list watch")

	// Every job ends once, done or reported failed.
	ended := map[task.ID]task.Status{}
	for len(ended) < len(submitted) {
		nctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		ev, err := jobEvents.Next(nctx)
		cancel()
		if err != nil {
			for _, id := range submitted {
				if _, ok := ended[id]; !ok {
					t.Errorf("job %s never ended: %s", id, jobStory(t, leadJobs, string(id)))
				}
			}
			t.Fatalf("only %d of %d jobs ended within 30 s of the last event: %v\nlogs:\n%s\ngoroutines of the watches and the client:\n%s",
				len(ended), len(submitted), err, logs.String(), stacksWith("nats.go/jetstream", "troupe/remote"))
		}
		if ev.Kind != task.EventTerminated || ev.Notification == "" {
			continue
		}
		if _, dup := ended[ev.State.ID]; dup {
			t.Errorf("job %s ended twice", ev.State.ID)
		}
		ended[ev.State.ID] = ev.State.Status
		if ev.State.Status != task.Completed {
			d, _ := task.DetailAs[*task.Remote](ev.State)
			t.Logf("job %s %s: %s", ev.State.ID, ev.State.Status, d.Error)
		}
	}
	failed := 0
	for _, st := range ended {
		if st != task.Completed {
			failed++
		}
	}
	t.Logf("%d jobs ended once each, %d of them failed and reported", len(ended), failed)

	// The killed server comes back and catches up.
	c.start(t, victim)
	c.waitCurrent(t, ns+"_v1_mail")
	c.waitCurrent(t, "KV_"+ns+"_v1_tasks")
	t.Logf("%s back and current %v after the kill", victim.name, time.Since(killedAt).Round(time.Millisecond))
}

func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func waitKick(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatalf("%s closed after the server loss", what)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no kick within 30s for a change after the server loss", what)
	}
}

// stacksWith returns the stacks of the goroutines that pass through any
// of the packages named, for a failure message.
func stacksWith(pkgs ...string) string {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var b strings.Builder
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if slices.ContainsFunc(pkgs, func(p string) bool { return strings.Contains(g, p) }) {
			b.WriteString(g)
			b.WriteString("\n\n")
		}
	}
	return b.String()
}

// jobStory lists the events stored for job id, for a failure message.
func jobStory(t *testing.T, j *natsstore.Jobs, id string) string {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	evs, err := j.Watch(ctx, id)
	if err != nil {
		return fmt.Sprintf("its events cannot be watched: %v", err)
	}
	var b strings.Builder
	for e := range evs {
		fmt.Fprintf(&b, "\n  %s attempt %d worker %s %s", e.Kind, e.Attempt, e.Worker, e.Time.Format("15:04:05.000"))
	}
	if b.Len() == 0 {
		return "no events stored"
	}
	return "events:" + b.String()
}
