package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/remote"
	"github.com/troupe-dev/troupe/remote/remotetest"
	"github.com/troupe-dev/troupe/task"
)

const (
	ackWait   = 400 * time.Millisecond
	ttl       = 400 * time.Millisecond
	heartbeat = 50 * time.Millisecond
)

// env is a queue in memory, a lead's registry and client.
type env struct {
	mem    *remotetest.Mem
	reg    *task.Registry
	sub    *task.Subscription
	client *remote.Client
}

// newEnvOn is newEnv whose client uses q (a wrapper of a connection to
// mem) for its queue and registry, with cfg's other fields.
func newEnvOn(t *testing.T, mem *remotetest.Mem, q interface {
	remote.Queue
	remote.Registry
}, cfg remote.ClientConfig) *env {
	t.Helper()
	e := &env{mem: mem, reg: task.New(task.Config{PollInterval: -1})}
	e.sub = e.reg.Subscribe()
	cfg.Queue, cfg.Workers, cfg.Tasks, cfg.CheckEvery = q, q, e.reg, heartbeat
	c, err := remote.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.client = c
	t.Cleanup(func() {
		c.Close()
		e.reg.Close(context.Background())
	})
	return e
}

func newEnv(t *testing.T, policy remote.Policy) *env {
	t.Helper()
	mem := remotetest.New(ackWait, ttl)
	return newEnvOn(t, mem, mem.Conn(), remote.ClientConfig{OnLost: policy, SubmittedBy: "lead"})
}

// worker runs a worker on its own connection (and cfg.Queue, if set, in
// front of it) until the test ends or the returned stop is called; stop
// waits for Run to return.
func (e *env) worker(t *testing.T, cfg remote.WorkerConfig) (conn *remotetest.Conn, stop func()) {
	t.Helper()
	conn = e.mem.Conn()
	if cfg.Queue == nil {
		cfg.Queue = conn
	}
	cfg.Registry, cfg.Heartbeat = conn, heartbeat
	w, err := remote.NewWorker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("worker %s: Run: %v", cfg.Name, err)
			}
		})
	}
	t.Cleanup(stop)
	e.waitWorker(t, cfg.Name)
	return conn, stop
}

func (e *env) waitWorker(t *testing.T, name string) {
	t.Helper()
	probe := e.mem.Conn()
	waitFor(t, "worker "+name+" to register", func() bool {
		ok, _ := remote.Alive(t.Context(), probe, name)
		return ok
	})
}

// waitFor polls cond for up to 10 s and fails the test naming what it
// waited for.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// terminated waits for the notifications of n tasks.
func (e *env) terminated(t *testing.T, n int) map[task.ID]task.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	got := map[task.ID]task.Event{}
	for len(got) < n {
		ev, err := e.sub.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for %d task notifications, got %d: %v", n, len(got), err)
		}
		if ev.Kind == task.EventTerminated && ev.Notification != "" {
			got[ev.State.ID] = ev
		}
	}
	return got
}

func (e *env) submit(t *testing.T, r remote.Request) task.State {
	t.Helper()
	if r.Description == "" {
		r.Description = "job"
	}
	st, err := e.client.Submit(t.Context(), r)
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	return st
}

func TestJobRunsToNotification(t *testing.T) {
	e := newEnv(t, remote.OnLostFail)
	e.worker(t, remote.WorkerConfig{Name: "w1", Run: func(_ context.Context, j remote.Job, progress func(string, remote.Usage)) remote.Result {
		progress("reading", remote.Usage{TotalTokens: 10, ToolUses: 1})
		return remote.Result{Text: "done: " + j.Prompt, Usage: remote.Usage{TotalTokens: 30, ToolUses: 2, Duration: 1500 * time.Millisecond}}
	}})
	st := e.submit(t, remote.Request{Description: "survey", Prompt: "count the files", ToolUseID: "toolu_1"})
	if st.Type != task.RemoteAgent || st.Status != task.Pending || !strings.HasPrefix(string(st.ID), "r") {
		t.Fatalf("Submit registered %+v, want a pending remote_agent task with an r id", st)
	}
	ev := e.terminated(t, 1)[st.ID]
	if ev.State.Status != task.Completed {
		t.Fatalf("task ended %s, want completed: %s", ev.State.Status, ev.Notification)
	}
	for _, want := range []string{"<result>done: count the files</result>", "<total_tokens>30</total_tokens>", "<tool_uses>2</tool_uses>",
		"<duration_ms>1500</duration_ms>", "<tool-use-id>toolu_1</tool-use-id>", "<task-type>remote_agent</task-type>", "worker w1"} {
		if !strings.Contains(ev.Notification, want) {
			t.Errorf("notification lacks %q:\n%s", want, ev.Notification)
		}
	}
	d, _ := task.DetailAs[*task.Remote](ev.State)
	if d.Worker != "w1" || d.Attempt != 1 || d.Progress != "reading" {
		t.Errorf("detail %+v, want worker w1, attempt 1, last progress \"reading\"", d)
	}
	// The worker settles the job once its result is out: the lead may see
	// the result first.
	waitFor(t, "the finished job to leave the queue", func() bool { return len(e.mem.Queued()) == 0 })
}

func TestCapacity(t *testing.T) {
	e := newEnv(t, remote.OnLostFail)
	var now, peak atomic.Int32
	release := make(chan struct{})
	e.worker(t, remote.WorkerConfig{Name: "w1", Capacity: 2, Run: func(ctx context.Context, j remote.Job, _ func(string, remote.Usage)) remote.Result {
		n := now.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		<-release
		now.Add(-1)
		return remote.Result{Text: j.ID}
	}})
	var ids []task.ID
	for i := range 4 {
		ids = append(ids, e.submit(t, remote.Request{Prompt: fmt.Sprint("job ", i)}).ID)
	}
	// Two run, two wait: wait until two started, then check the others wait.
	waitFor(t, "two jobs running at once on a worker of capacity 2", func() bool { return now.Load() >= 2 })
	runs := 0
	for _, id := range ids {
		runs += e.mem.Runs(string(id))
	}
	if runs != 2 {
		t.Errorf("%d jobs started while two run on a worker of capacity 2", runs)
	}
	close(release)
	got := e.terminated(t, 4)
	for _, id := range ids {
		if got[id].State.Status != task.Completed {
			t.Errorf("task %s: %s", id, got[id].State.Status)
		}
	}
	if p := peak.Load(); p != 2 {
		t.Errorf("at most %d jobs ran at once, want 2 (the capacity)", p)
	}
}

func TestLabels(t *testing.T) {
	e := newEnv(t, remote.OnLostFail)
	run := func(name string) remote.RunFunc {
		return func(context.Context, remote.Job, func(string, remote.Usage)) remote.Result {
			return remote.Result{Text: "ran on " + name}
		}
	}
	e.worker(t, remote.WorkerConfig{Name: "plain", Labels: []string{"linux"}, Run: run("plain"), Capacity: 4})
	e.worker(t, remote.WorkerConfig{Name: "gpu", Labels: []string{"linux", "gpu"}, Run: run("gpu")})
	var ids []task.ID
	for range 3 {
		ids = append(ids, e.submit(t, remote.Request{Prompt: "train", Labels: []string{"gpu"}}).ID)
	}
	got := e.terminated(t, 3)
	for _, id := range ids {
		if n := got[id].Notification; !strings.Contains(n, "<result>ran on gpu</result>") {
			t.Errorf("a job wanting gpu ran elsewhere:\n%s", n)
		}
	}
	_, err := e.client.Submit(t.Context(), remote.Request{Description: "x", Prompt: "p", Labels: []string{"tpu"}})
	if !errors.Is(err, remote.ErrNoWorker) || !strings.Contains(err.Error(), "tpu") {
		t.Errorf("Submit wanting a label no worker has: %v, want ErrNoWorker naming it", err)
	}
	if _, err := e.client.Submit(t.Context(), remote.Request{Description: "x", Prompt: "p", Labels: []string{"bad label"}}); !errors.Is(err, remote.ErrBadJob) {
		t.Errorf("Submit with a malformed label: %v, want ErrBadJob", err)
	}
}

func TestNoWorker(t *testing.T) {
	e := newEnv(t, remote.OnLostFail)
	_, err := e.client.Submit(t.Context(), remote.Request{Description: "x", Prompt: "p"})
	if !errors.Is(err, remote.ErrNoWorker) || !strings.Contains(err.Error(), "troupe worker") {
		t.Errorf("Submit without workers: %v, want ErrNoWorker telling to start one", err)
	}
}

// blocking is a run function that signals its start and runs until its
// context ends or release is closed.
// It ends too when the test does (t.Context ends before the cleanups).
func blocking(t *testing.T, started chan<- string, release <-chan struct{}, name string, calls *atomic.Int32) remote.RunFunc {
	return func(ctx context.Context, j remote.Job, _ func(string, remote.Usage)) remote.Result {
		calls.Add(1)
		started <- name
		select {
		case <-ctx.Done():
		case <-release:
		case <-t.Context().Done():
		}
		return remote.Result{Text: "finished by " + name}
	}
}

func TestLostWorkerFails(t *testing.T) {
	e := newEnv(t, remote.OnLostFail)
	started := make(chan string, 4)
	var calls atomic.Int32
	conn, _ := e.worker(t, remote.WorkerConfig{Name: "w1", Run: blocking(t, started, make(chan struct{}), "w1", &calls)})
	st := e.submit(t, remote.Request{Prompt: "long"})
	<-started
	conn.Cut() // w1 vanishes mid-job
	ev := e.terminated(t, 1)[st.ID]
	if ev.State.Status != task.Failed || !strings.Contains(ev.Notification, "worker w1 was lost") || !strings.Contains(ev.Notification, "not run again") {
		t.Fatalf("task after its worker was lost: %s\n%s", ev.State.Status, ev.Notification)
	}
	// A second worker gets the redelivered job and drops it without running it.
	release := make(chan struct{})
	close(release)
	e.worker(t, remote.WorkerConfig{Name: "w2", Run: blocking(t, started, release, "w2", &calls)})
	waitFor(t, "the lost job to leave the queue", func() bool { return len(e.mem.Queued()) == 0 })
	if n := calls.Load(); n != 1 {
		t.Errorf("the job ran %d times with policy fail, want 1", n)
	}
}

func TestLostWorkerRequeues(t *testing.T) {
	e := newEnv(t, remote.OnLostRequeue)
	started := make(chan string, 4)
	var calls atomic.Int32
	conn, _ := e.worker(t, remote.WorkerConfig{Name: "w1", Run: blocking(t, started, make(chan struct{}), "w1", &calls)})
	st := e.submit(t, remote.Request{Prompt: "long"})
	<-started
	conn.Cut()
	// The lead notes the loss while the job waits for another worker.
	waitFor(t, "the lead to note the lost worker", func() bool {
		s, _ := e.reg.Get(st.ID)
		d, _ := task.DetailAs[*task.Remote](s)
		return d != nil && strings.Contains(d.Progress, "requeued")
	})
	release := make(chan struct{})
	close(release)
	e.worker(t, remote.WorkerConfig{Name: "w2", Run: blocking(t, started, release, "w2", &calls)})
	ev := e.terminated(t, 1)[st.ID]
	if ev.State.Status != task.Completed || !strings.Contains(ev.Notification, "finished by w2") {
		t.Fatalf("requeued job: %s\n%s", ev.State.Status, ev.Notification)
	}
	if d, _ := task.DetailAs[*task.Remote](ev.State); d.Attempt != 2 {
		t.Errorf("attempt %d, want 2", d.Attempt)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the job ran %d times, want 2 (once per worker)", n)
	}
	waitFor(t, "the finished job to leave the queue", func() bool { return len(e.mem.Queued()) == 0 })
}

func TestRequeuedJobLostAgainFails(t *testing.T) {
	e := newEnv(t, remote.OnLostRequeue)
	started := make(chan string, 4)
	var calls atomic.Int32
	never := make(chan struct{})
	c1, _ := e.worker(t, remote.WorkerConfig{Name: "w1", Run: blocking(t, started, never, "w1", &calls)})
	st := e.submit(t, remote.Request{Prompt: "long"})
	<-started
	c1.Cut()
	c2, _ := e.worker(t, remote.WorkerConfig{Name: "w2", Run: blocking(t, started, never, "w2", &calls)})
	if w := <-started; w != "w2" {
		t.Fatalf("second run on %s", w)
	}
	c2.Cut()
	ev := e.terminated(t, 1)[st.ID]
	if ev.State.Status != task.Failed || !strings.Contains(ev.Notification, "worker w2 was lost") || !strings.Contains(ev.Notification, "attempt 2 of 2") {
		t.Fatalf("job lost on its last attempt: %s\n%s", ev.State.Status, ev.Notification)
	}
}

func TestShutdownRequeue(t *testing.T) {
	e := newEnv(t, remote.OnLostFail)
	started := make(chan string, 4)
	var calls atomic.Int32
	_, stop := e.worker(t, remote.WorkerConfig{Name: "w1", Requeue: true, Run: blocking(t, started, make(chan struct{}), "w1", &calls)})
	st := e.submit(t, remote.Request{Prompt: "long"})
	<-started
	stop() // cancels the run and gives the job back, uncounted
	release := make(chan struct{})
	close(release)
	e.worker(t, remote.WorkerConfig{Name: "w2", Run: blocking(t, started, release, "w2", &calls)})
	ev := e.terminated(t, 1)[st.ID]
	if ev.State.Status != task.Completed || !strings.Contains(ev.Notification, "finished by w2") {
		t.Fatalf("job given back on shutdown (policy fail still runs it again): %s\n%s", ev.State.Status, ev.Notification)
	}
}

func TestShutdownFinishes(t *testing.T) {
	e := newEnv(t, remote.OnLostFail)
	started := make(chan string, 4)
	var calls atomic.Int32
	release := make(chan struct{})
	_, stop := e.worker(t, remote.WorkerConfig{Name: "w1", Run: blocking(t, started, release, "w1", &calls)})
	st := e.submit(t, remote.Request{Prompt: "long"})
	<-started
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("Run returned with a job still running")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	<-stopped
	ev := e.terminated(t, 1)[st.ID]
	if ev.State.Status != task.Completed || !strings.Contains(ev.Notification, "finished by w1") {
		t.Fatalf("job finished on shutdown: %s\n%s", ev.State.Status, ev.Notification)
	}
}

func TestConfigErrors(t *testing.T) {
	m := remotetest.New(ackWait, ttl)
	c := m.Conn()
	run := func(context.Context, remote.Job, func(string, remote.Usage)) remote.Result { return remote.Result{} }
	for _, cfg := range []remote.WorkerConfig{
		{Name: "", Queue: c, Registry: c, Run: run},
		{Name: "a b", Queue: c, Registry: c, Run: run},
		{Name: "w", Queue: c, Registry: c, Run: run, Capacity: -1},
		{Name: "w", Queue: c, Registry: c, Run: run, Labels: []string{""}},
		{Name: "w", Queue: c, Registry: c},
	} {
		if _, err := remote.NewWorker(cfg); err == nil {
			t.Errorf("NewWorker(%+v) accepted it", cfg)
		}
	}
	if _, err := remote.NewClient(remote.ClientConfig{Queue: c, Workers: c, Tasks: task.New(task.Config{PollInterval: -1}), OnLost: "retry"}); err == nil || !strings.Contains(err.Error(), "retry") {
		t.Errorf("NewClient with policy retry: %v", err)
	}
	for _, j := range []remote.Job{
		{ID: "", Prompt: "p", MaxAttempts: 1},
		{ID: "a.b", Prompt: "p", MaxAttempts: 1},
		{ID: "a", Prompt: " ", MaxAttempts: 1},
		{ID: "a", Prompt: "p", MaxAttempts: 0},
	} {
		if err := j.Validate(); !errors.Is(err, remote.ErrBadJob) {
			t.Errorf("Validate(%+v) = %v, want ErrBadJob", j, err)
		}
	}
}

func TestLeadStopsJob(t *testing.T) {
	e := newEnv(t, remote.OnLostFail)
	started := make(chan string, 1)
	ended := make(chan error, 1)
	e.worker(t, remote.WorkerConfig{Name: "w1", Run: func(ctx context.Context, j remote.Job, _ func(string, remote.Usage)) remote.Result {
		started <- "w1"
		select {
		case <-ctx.Done():
			ended <- context.Cause(ctx)
		case <-t.Context().Done():
			ended <- nil
		}
		return remote.Result{Text: "should not count"}
	}})
	st := e.submit(t, remote.Request{Prompt: "long"})
	<-started
	e.stop(t, st.ID)
	if err := <-ended; err == nil {
		t.Fatal("the worker's agent was not canceled by the lead's stop")
	}
	waitFor(t, "the stopped job to leave the queue", func() bool { return len(e.mem.Queued()) == 0 })
	if s, _ := e.reg.Get(st.ID); s.Status != task.Killed {
		t.Errorf("stopped task is %s, want killed", s.Status)
	}
}

// TestWorkerDiesBeforeStart: the worker that took the job dies before it
// reports the start, and no other worker is alive: under policy fail the
// task fails instead of waiting forever.
func TestWorkerDiesBeforeStart(t *testing.T) {
	e := newEnv(t, remote.OnLostFail)
	c := e.mem.Conn()
	if err := c.Register(t.Context(), remote.WorkerInfo{Name: "ghost"}); err != nil {
		t.Fatal(err)
	}
	st := e.submit(t, remote.Request{Prompt: "p"})
	d, err := c.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Start(t.Context(), "ghost"); err != nil {
		t.Fatal(err)
	}
	c.Cut() // dies before publishing EventStarted
	ev := e.terminated(t, 1)[st.ID]
	if ev.State.Status != task.Failed || !strings.Contains(ev.Notification, "no live worker can run the job") {
		t.Fatalf("%s\n%s", ev.State.Status, ev.Notification)
	}
}

// countingRegistry counts the listings of a real registry.
type countingRegistry struct {
	remote.Registry
	lists atomic.Int32
}

func (r *countingRegistry) List(ctx context.Context) ([]remote.WorkerInfo, error) {
	r.lists.Add(1)
	return r.Registry.List(ctx)
}

// TestTrackingSharesListings: the checks of many tracked jobs share one
// registry listing per half check instead of listing once per job.
func TestTrackingSharesListings(t *testing.T) {
	e := newEnv(t, remote.OnLostFail)
	lead := e.mem.Conn()
	workers := &countingRegistry{Registry: lead}
	c, err := remote.NewClient(remote.ClientConfig{Queue: lead, Workers: workers, Tasks: e.reg, SubmittedBy: "lead", CheckEvery: heartbeat})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	const n = 8
	started := make(chan string, n)
	var calls atomic.Int32
	e.worker(t, remote.WorkerConfig{Name: "w1", Capacity: n, Run: blocking(t, started, make(chan struct{}), "w1", &calls)})
	for range n {
		if _, err := c.Submit(t.Context(), remote.Request{Description: "job", Prompt: "long"}); err != nil {
			t.Fatal(err)
		}
	}
	for range n {
		<-started
	}
	from, begin := workers.lists.Load(), time.Now()
	const k = 10
	waitFor(t, fmt.Sprintf("%d more listings", k), func() bool { return workers.lists.Load() >= from+k })
	// k listings at most one per half check take at least k-1 half
	// checks; one per job and check would take about k/n checks.
	if el := time.Since(begin); el < (k-1)*heartbeat/2 {
		t.Errorf("%d listings for %d tracked jobs within %v; want at most one per %v", k, n, el, heartbeat/2)
	}
}

// outage is a worker's queue whose publishes of results fail until a
// time, as while a cluster elects the leader of the events' stream.
type outage struct {
	*remotetest.Conn
	until    time.Time
	failures atomic.Int32
}

func (o *outage) Publish(ctx context.Context, e remote.Event) error {
	if e.Kind == remote.EventResult && time.Now().Before(o.until) {
		o.failures.Add(1)
		return errors.New("no response from stream")
	}
	return o.Conn.Publish(ctx, e)
}

// TestResultOutlivesOutage: a result that cannot be published for longer
// than the 20 heartbeats a progress event is retried for is still
// delivered, and the job is acknowledged only after it: the lead is not
// left waiting on a live worker for a result that was dropped.
func TestResultOutlivesOutage(t *testing.T) {
	e := newEnv(t, remote.OnLostFail)
	var logs []string
	var mu sync.Mutex
	q := &outage{Conn: e.mem.Conn(), until: time.Now().Add(30 * heartbeat)}
	e.worker(t, remote.WorkerConfig{Name: "w1", Queue: q,
		Log: func(s string) { mu.Lock(); logs = append(logs, s); mu.Unlock() },
		Run: func(context.Context, remote.Job, func(string, remote.Usage)) remote.Result {
			return remote.Result{Text: "the answer"}
		}})
	st := e.submit(t, remote.Request{Prompt: "p"})
	ev := e.terminated(t, 1)[st.ID]
	if ev.State.Status != task.Completed || !strings.Contains(ev.Notification, "<result>the answer</result>") {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("job ended %s; want completed with its result:\n%s\nworker log:\n%s", ev.State.Status, ev.Notification, strings.Join(logs, "\n"))
	}
	if n := q.failures.Load(); n < 20 {
		t.Errorf("%d failed result publishes; want the outage to outlast 20 heartbeats of retries", n)
	}
	if n := e.mem.Runs(string(st.ID)); n != 1 {
		t.Errorf("job ran %d times; want once (its delivery kept alive while the result waited)", n)
	}
	waitFor(t, "the queue to be empty", func() bool { return len(e.mem.Queued()) == 0 })
}

// shortWatch is a lead's queue whose first watch of each job ends before
// the job's result, as a consumer that gave up would.
// shortWatch's first watch of a job ends at once, delivering nothing;
// with stuck it delivers nothing and stays open until its context ends
// (a consumer lost with its server and never replaced), and released is
// closed then. The watches after the first are the queue's.
type shortWatch struct {
	*remotetest.Conn
	stuck    bool
	released chan struct{}

	mu      sync.Mutex
	watched map[string]int
}

func (q *shortWatch) Watch(ctx context.Context, id string) (<-chan remote.Event, error) {
	q.mu.Lock()
	q.watched[id]++
	n := q.watched[id]
	q.mu.Unlock()
	if n > 1 {
		return q.Conn.Watch(ctx, id)
	}
	out := make(chan remote.Event)
	if !q.stuck {
		close(out)
		return out, nil
	}
	go func() {
		<-ctx.Done()
		close(out)
		close(q.released)
	}()
	return out, nil
}

// runOne runs one job on a new worker w1 whose result is text, and checks
// that its task completes with it.
func (e *env) runOne(t *testing.T, text string) task.State {
	t.Helper()
	e.worker(t, remote.WorkerConfig{Name: "w1", Run: func(context.Context, remote.Job, func(string, remote.Usage)) remote.Result {
		return remote.Result{Text: text}
	}})
	st := e.submit(t, remote.Request{Prompt: "p"})
	ev := e.terminated(t, 1)[st.ID]
	if ev.State.Status != task.Completed || !strings.Contains(ev.Notification, "<result>"+text+"</result>") {
		t.Fatalf("job ended %s; want completed with its result:\n%s", ev.State.Status, ev.Notification)
	}
	return st
}

// newWatchEnv is an env whose client watches jobs through a shortWatch
// (stuck or not), with cfg's other fields.
func newWatchEnv(t *testing.T, stuck bool, cfg remote.ClientConfig) (*env, *shortWatch) {
	t.Helper()
	mem := remotetest.New(ackWait, ttl)
	q := &shortWatch{Conn: mem.Conn(), stuck: stuck, released: make(chan struct{}), watched: map[string]int{}}
	return newEnvOn(t, mem, q, cfg), q
}

func (q *shortWatch) watches(id task.ID) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.watched[string(id)]
}

// TestStuckWatchReplaced: a job's watch that stays open but delivers
// nothing while the queue holds the job's events is found on the
// client's checks, stopped and made again, and the job ends with its
// result.
func TestStuckWatchReplaced(t *testing.T) {
	var logged atomic.Value
	e, q := newWatchEnv(t, true, remote.ClientConfig{Log: func(s string) { logged.Store(s) }})
	st := e.runOne(t, "heard anyway")
	if n := q.watches(st.ID); n != 2 {
		t.Errorf("job watched %d times; want 2 (the stuck watch made again once)", n)
	}
	select {
	case <-q.released:
	case <-time.After(10 * time.Second):
		t.Error("the stuck watch's context never ended: it is leaked")
	}
	if s, _ := logged.Load().(string); !strings.Contains(s, string(st.ID)) || !strings.Contains(s, "watching again") {
		t.Errorf("Log heard %q; want the job's stuck watch named", s)
	}
}

// TestQuietWatchKept: a job that publishes nothing for many checks keeps
// its one watch: quiet is not stuck.
func TestQuietWatchKept(t *testing.T) {
	e, q := newWatchEnv(t, false, remote.ClientConfig{})
	e.worker(t, remote.WorkerConfig{Name: "w1", Run: func(context.Context, remote.Job, func(string, remote.Usage)) remote.Result {
		time.Sleep(15 * heartbeat)
		return remote.Result{Text: "late"}
	}})
	st := e.submit(t, remote.Request{Prompt: "p"})
	e.terminated(t, 1)
	if n := q.watches(st.ID); n != 2 {
		t.Errorf("job watched %d times; want 2 (the first, which ends at once, and its one replacement)", n)
	}
}

// TestWatchEndsEarly: when a job's event watch ends while the job is
// tracked, the lead watches again and the job still ends with its result.
func TestWatchEndsEarly(t *testing.T) {
	e, q := newWatchEnv(t, false, remote.ClientConfig{})
	st := e.runOne(t, "still here")
	if n := q.watches(st.ID); n < 2 {
		t.Errorf("job watched %d times; want the ended watch resumed", n)
	}
}

// TestWorkerWatchEndsEarly: when the worker's watch for the lead's stop
// ends while the job runs, or stays open delivering nothing, it watches
// again, and the stop still reaches the job.
func TestWorkerWatchEndsEarly(t *testing.T) {
	for _, stuck := range []bool{false, true} {
		name := "ended"
		if stuck {
			name = "stuck"
		}
		t.Run(name, func(t *testing.T) { testWorkerWatchEndsEarly(t, stuck) })
	}
}

func testWorkerWatchEndsEarly(t *testing.T, stuck bool) {
	e := newEnv(t, remote.OnLostFail)
	q := &shortWatch{Conn: e.mem.Conn(), stuck: stuck, released: make(chan struct{}), watched: map[string]int{}}
	started := make(chan struct{}, 1)
	ended := make(chan error, 1)
	e.worker(t, remote.WorkerConfig{Name: "w1", Queue: q, Run: func(ctx context.Context, j remote.Job, _ func(string, remote.Usage)) remote.Result {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			ended <- context.Cause(ctx)
		case <-time.After(12 * time.Second): // not stopped: the test fails, the worker ends
			ended <- nil
		}
		return remote.Result{}
	}})
	st := e.submit(t, remote.Request{Prompt: "long"})
	<-started
	waitFor(t, "the worker to watch the job again", func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.watched[string(st.ID)] >= 2
	})
	e.stop(t, st.ID)
	if err := <-ended; err == nil {
		t.Fatal("the lead's stop never reached the job: the worker's ended watch was not made again")
	}
}

func TestJoinLabels(t *testing.T) {
	for _, tt := range []struct{ a, b, want []string }{
		{nil, nil, nil},
		{[]string{"linux"}, nil, []string{"linux"}},
		{nil, []string{"gpu"}, []string{"gpu"}},
		{[]string{"linux", "gpu"}, []string{"gpu", "big"}, []string{"linux", "gpu", "big"}},
	} {
		a := slices.Clone(tt.a)
		if got := remote.JoinLabels(a, tt.b); !slices.Equal(got, tt.want) {
			t.Errorf("JoinLabels(%q, %q) = %q; want %q", tt.a, tt.b, got, tt.want)
		}
		if !slices.Equal(a, tt.a) {
			t.Errorf("JoinLabels changed its first argument to %q", a)
		}
	}
}

// A job's spending by model comes back with its result and is handed to
// the lead's Spent once, before the task ends; a worker's count that is
// not a count is reported by Check.
func TestJobSpendingReachesTheLead(t *testing.T) {
	e := &env{mem: remotetest.New(ackWait, ttl), reg: task.New(task.Config{PollInterval: -1})}
	e.sub = e.reg.Subscribe()
	type spent struct {
		job, worker string
		models      []remote.ModelUsage
	}
	got := make(chan spent, 4)
	lead := e.mem.Conn()
	c, err := remote.NewClient(remote.ClientConfig{Queue: lead, Workers: lead, Tasks: e.reg, SubmittedBy: "lead", CheckEvery: heartbeat,
		Spent: func(j remote.Job, worker string, models []remote.ModelUsage) { got <- spent{j.ID, worker, models} }})
	if err != nil {
		t.Fatal(err)
	}
	e.client = c
	t.Cleanup(func() {
		c.Close()
		e.reg.Close(context.Background())
	})
	models := []remote.ModelUsage{
		{Model: "claude-haiku-4-5", Usage: llm.Usage{InputTokens: 300, OutputTokens: 30, CacheReadTokens: 7}, Calls: 2},
		{Model: "claude-sonnet-4-5", Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}, Calls: 1},
	}
	e.worker(t, remote.WorkerConfig{Name: "w1", Run: func(_ context.Context, j remote.Job, _ func(string, remote.Usage)) remote.Result {
		return remote.Result{Text: "done", Usage: remote.Usage{TotalTokens: 447}, Models: models}
	}})
	st := e.submit(t, remote.Request{Prompt: "spend"})
	e.terminated(t, 1)
	select {
	case s := <-got:
		if s.job != string(st.ID) || s.worker != "w1" || fmt.Sprint(s.models) != fmt.Sprint(models) {
			t.Errorf("Spent(%s, %s, %v); want (%s, w1, %v)", s.job, s.worker, s.models, st.ID, models)
		}
	default:
		t.Fatal("Spent was not called before the task ended")
	}
	select {
	case s := <-got:
		t.Errorf("Spent called twice: %v", s)
	case <-time.After(100 * time.Millisecond):
	}
	bad := remote.ModelUsage{Model: "m", Usage: llm.Usage{OutputTokens: -5}}
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), `model "m": a negative count`) {
		t.Errorf("Check of a negative count: %v", err)
	}
	for _, m := range models {
		if err := m.Check(); err != nil {
			t.Errorf("Check(%v): %v", m, err)
		}
	}
}

// FuzzResultModels decodes a worker's result as the lead gets it, and
// checks its usage entries: no input panics, and an entry Check passes has
// no negative count.
func FuzzResultModels(f *testing.F) {
	f.Add([]byte(`{"text":"done","usage":{"TotalTokens":3},"models":[{"model":"claude-sonnet-4-5","usage":{"input_tokens":1,"output_tokens":2},"calls":1}]}`))
	f.Add([]byte(`{"models":[{"model":"m","usage":{"output_tokens":-1},"calls":-3}]}`))
	f.Add([]byte(`{"models":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r remote.Result
		if json.Unmarshal(b, &r) != nil {
			return
		}
		for _, m := range r.Models {
			if m.Check() == nil && (m.Usage.InputTokens < 0 || m.Usage.OutputTokens < 0 || m.Calls < 0) {
				t.Errorf("Check passed %+v", m)
			}
		}
	})
}

// A job the lead stops still reports what it spent: the worker's result
// of the canceled run carries its models, and the lead's Spent hears it.
func TestStoppedJobReportsSpending(t *testing.T) {
	e := &env{mem: remotetest.New(ackWait, ttl), reg: task.New(task.Config{PollInterval: -1})}
	e.sub = e.reg.Subscribe()
	got := make(chan []remote.ModelUsage, 1)
	lead := e.mem.Conn()
	c, err := remote.NewClient(remote.ClientConfig{Queue: lead, Workers: lead, Tasks: e.reg, SubmittedBy: "lead", CheckEvery: heartbeat,
		Spent: func(_ remote.Job, _ string, models []remote.ModelUsage) { got <- models }})
	if err != nil {
		t.Fatal(err)
	}
	e.client = c
	t.Cleanup(func() {
		c.Close()
		e.reg.Close(context.Background())
	})
	started := make(chan struct{}, 1)
	spent := []remote.ModelUsage{{Model: "m", Usage: llm.Usage{InputTokens: 50, OutputTokens: 5}, Calls: 1}}
	e.worker(t, remote.WorkerConfig{Name: "w1", Run: func(ctx context.Context, _ remote.Job, _ func(string, remote.Usage)) remote.Result {
		started <- struct{}{}
		<-ctx.Done()
		return remote.Result{Error: "canceled", Models: spent}
	}})
	st := e.submit(t, remote.Request{Prompt: "long"})
	<-started
	e.stop(t, st.ID)
	select {
	case models := <-got:
		if fmt.Sprint(models) != fmt.Sprint(spent) {
			t.Errorf("Spent got %v; want %v", models, spent)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stopped job's spending never reached the lead")
	}
	if s, _ := e.reg.Get(st.ID); s.Status != task.Killed {
		t.Errorf("stopped task is %s, want killed", s.Status)
	}
}

// stop stops task id as the lead's TaskStop does; a failure names the
// task's state, and why it ended when it had.
func (e *env) stop(t *testing.T, id task.ID) {
	t.Helper()
	if _, err := e.reg.Stop(t.Context(), id); err != nil {
		s, _ := e.reg.Get(id)
		t.Fatalf("Stop: %v; the task: %+v, detail %+v", err, s, s.Detail)
	}
}
