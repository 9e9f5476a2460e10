package nats_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/troupe-dev/troupe/remote"
	natsstore "github.com/troupe-dev/troupe/store/nats"
)

// TestQueuedJobsKeepTheirPlace kills the server leading the job queue
// (its stream, its consumer, the events and the runs) while jobs wait in
// the queue, some submitted before the kill and some across it, and a
// worker of capacity 1 either holds the first job across the kill (held)
// or is taking one job after another as the server dies (draining): every
// job submitted is run exactly once, on its first attempt; none is lost,
// none runs twice. Held, they run in the order submitted. Draining, the
// one job whose delivery was on its way when the server died may lose its
// place: the queue hands it out again only after its heartbeat timeout.
func TestQueuedJobsKeepTheirPlace(t *testing.T) {
	for _, draining := range []bool{false, true} {
		name := "held"
		if draining {
			name = "draining"
		}
		t.Run(name, func(t *testing.T) { queuedJobsKeepTheirPlace(t, draining) })
	}
}

// orderBeatTimeout is the queue's heartbeat timeout in
// TestQueuedJobsKeepTheirPlace: after it a delivery lost with the server
// goes out again.
const orderBeatTimeout = 3 * time.Second

func queuedJobsKeepTheirPlace(t *testing.T, draining bool) {
	c := startCluster(t)
	const ns = "order"
	var logs lockedBuffer
	opts := natsstore.Options{Namespace: ns, SendTimeout: time.Minute, RequestTimeout: time.Minute,
		MaxReconnectWait: 200 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	jobsOn := func() *natsstore.Jobs {
		s, err := natsstore.Open(t.Context(), c.urls(), opts)
		if err != nil {
			t.Fatalf("Open(%s): %v", c.urls(), err)
		}
		t.Cleanup(func() { s.Close() })
		j, err := s.Jobs(t.Context(), natsstore.JobOptions{HeartbeatTimeout: orderBeatTimeout, WorkerTTL: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	lead, wq := jobsOn(), jobsOn()

	// One server leads everything the queue is made of.
	jobs := ns + "_v1_jobs"
	victim := c.streamLeader(t, jobs)
	for _, st := range []string{ns + "_v1_jobevents", "KV_" + ns + "_v1_jobruns", "KV_" + ns + "_v1_workers"} {
		c.moveLeader(t, st, victim)
	}
	for range 20 {
		if victim.JetStreamIsConsumerLeader(server.DEFAULT_GLOBAL_ACCOUNT, jobs, "workers") {
			break
		}
		for _, n := range c.nodes {
			if n.JetStreamIsConsumerLeader(server.DEFAULT_GLOBAL_ACCOUNT, jobs, "workers") {
				n.JetStreamStepdownConsumer(server.DEFAULT_GLOBAL_ACCOUNT, jobs, "workers")
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !victim.JetStreamIsConsumerLeader(server.DEFAULT_GLOBAL_ACCOUNT, jobs, "workers") {
		t.Logf("the workers consumer is led elsewhere than %s: the kill takes the streams' leaders only", victim.name)
	}

	var mu sync.Mutex
	var ran []string             // job ids in the order their runs began
	attempts := map[string]int{} // job id -> the attempt numbers of its runs, summed
	ranAt := map[string]time.Time{}
	hold := make(chan struct{})
	first := make(chan struct{})
	startWorker(t, wq, remote.WorkerConfig{Name: "w1", Capacity: 1,
		Log: func(s string) { fmt.Fprintf(&logs, "worker w1: %s\n", s) },
		Run: func(_ context.Context, j remote.Job, _ func(string, remote.Usage)) remote.Result {
			mu.Lock()
			ran = append(ran, j.ID)
			ranAt[j.ID] = time.Now()
			n := len(ran)
			mu.Unlock()
			if n == 1 {
				close(first)
				<-hold // held across the kill (held), or until just before it (draining)
			}
			if draining {
				time.Sleep(30 * time.Millisecond) // the next pull meets the kill
			}
			return remote.Result{Text: "ran " + j.ID}
		}})

	const before, across = 12, 12
	var submitted []string
	submit := func(i int) {
		j := remote.Job{ID: fmt.Sprintf("order-%03d", i), Prompt: "p", Description: "d", MaxAttempts: 1, Submitted: time.Now()}
		if err := lead.Submit(t.Context(), j); err != nil {
			t.Fatalf("Submit(%s): %v", j.ID, err)
		}
		submitted = append(submitted, j.ID)
	}
	for i := range before {
		submit(i)
	}
	select {
	case <-first:
	case <-time.After(30 * time.Second):
		t.Fatal("the worker took no job within 30 s")
	}
	if draining {
		close(hold)
		for {
			mu.Lock()
			n := len(ran)
			mu.Unlock()
			if n >= 3 {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	killed := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := before; i < before+across; i++ {
			submit(i) // the first ones meet a queue without a leader
		}
	}()
	victim.stop()
	<-done
	t.Logf("%d jobs submitted across the kill of %s in %v", across, victim.name, time.Since(killed).Round(time.Millisecond))
	if !draining {
		close(hold)
	}

	// Every job's result is published; the queue empties.
	deadline := time.Now().Add(90 * time.Second)
	for _, id := range submitted {
		for {
			ev, err := lead.LastEvent(t.Context(), id)
			if err == nil && ev.Kind == remote.EventResult {
				mu.Lock()
				attempts[id] += ev.Attempt
				mu.Unlock()
				break
			}
			if time.Now().After(deadline) {
				mu.Lock()
				t.Fatalf("job %s has no result within 90 s (newest event %+v, %v); runs so far %q\n%s", id, ev, err, ran, logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Every job is settled: the work queue is empty, so none can run again.
	js := jetStream(t, c.urls())
	for {
		str, err := js.Stream(t.Context(), jobs)
		if err == nil && str.CachedInfo().State.Msgs == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job queue still holds jobs 90 s on: %v\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if sorted := slices.Sorted(slices.Values(ran)); !slices.Equal(sorted, submitted) {
		t.Fatalf("runs %q; want each job submitted run once, none lost, none twice: %q", ran, submitted)
	}
	if slices.Equal(ran, submitted) {
		return
	}
	// A job whose delivery was on its way to the worker when the server
	// died is not lost (the queue hands it out again after the heartbeat
	// timeout), but it loses its place: with capacity 1 there is at most
	// one such job, and only while the worker is taking jobs.
	without := func(ids []string, id string) []string {
		return slices.DeleteFunc(slices.Clone(ids), func(x string) bool { return x == id })
	}
	for _, id := range ran {
		if slices.Equal(without(ran, id), without(submitted, id)) {
			if !draining {
				t.Errorf("job %s ran out of its place (%q) though no job was being taken at the kill", id, ran)
			}
			t.Logf("job %s, taken as the server died, ran %v after the kill, after the jobs behind it (the queue's heartbeat timeout is %v)",
				id, ranAt[id].Sub(killed).Round(time.Millisecond), orderBeatTimeout)
			return
		}
	}
	t.Errorf("runs in the order %q; want the order submitted %q, one job at most out of place", ran, submitted)
	for id, a := range attempts {
		if a != 1 {
			t.Errorf("job %s: result of attempt %d; want its first and only run", id, a)
		}
	}
}
