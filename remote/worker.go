package remote

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// errStoppedByLead cancels a run the lead stopped.
var errStoppedByLead = errors.New("remote: the lead stopped the job")

// RunFunc runs job j: it builds an agent in the worker's own working
// folder and runs it on j.Prompt, calling progress as it goes. A failure is
// a Result with Error set. ctx ends when the lead stops the job or the
// worker gives it back on shutdown.
type RunFunc func(ctx context.Context, j Job, progress func(text string, u Usage)) Result

// WorkerConfig configures a Worker.
type WorkerConfig struct {
	Name     string   // required: [A-Za-z0-9_-], at most 64 characters
	Labels   []string // what it offers; a job's labels must all be here
	Capacity int      // jobs at once; default 1
	Queue    Queue
	Registry Registry
	Run      RunFunc
	// Heartbeat is how often it refreshes its registration and the
	// deliveries of its jobs; default DefaultHeartbeat. It must be well
	// under the queue's heartbeat timeout and the registry's time to live.
	Heartbeat time.Duration
	// Requeue makes a shutdown give running jobs back to the queue (their
	// agents are canceled) instead of finishing them.
	Requeue bool
	// OnEvent sees every event the worker publishes, once it was
	// published (or given up on), and Log every problem it works around;
	// both optional.
	OnEvent func(Event)
	Log     func(string)
	Now     func() time.Time
}

// Worker takes jobs from a queue and runs them, within its capacity and
// labels. Use NewWorker, then Run.
type Worker struct {
	cfg WorkerConfig

	mu      sync.Mutex
	running map[string]bool
}

// NewWorker checks cfg and returns a worker.
func NewWorker(cfg WorkerConfig) (*Worker, error) {
	if err := CheckName(cfg.Name); err != nil {
		return nil, err
	}
	switch {
	case cfg.Capacity < 0:
		return nil, fmt.Errorf("remote: worker capacity %d: want at least 1", cfg.Capacity)
	case cfg.Queue == nil || cfg.Registry == nil || cfg.Run == nil:
		return nil, errors.New("remote: a worker needs a queue, a registry and a run function")
	case cfg.Heartbeat < 0:
		return nil, fmt.Errorf("remote: heartbeat %v: want a positive duration", cfg.Heartbeat)
	}
	if err := CheckLabels(cfg.Labels); err != nil {
		return nil, fmt.Errorf("remote: worker %s: %w", cfg.Name, err)
	}
	if cfg.Capacity == 0 {
		cfg.Capacity = 1
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.OnEvent == nil {
		cfg.OnEvent = func(Event) {}
	}
	if cfg.Log == nil {
		cfg.Log = func(string) {}
	}
	return &Worker{cfg: cfg, running: map[string]bool{}}, nil
}

func (w *Worker) info() WorkerInfo {
	w.mu.Lock()
	defer w.mu.Unlock()
	info := WorkerInfo{Name: w.cfg.Name, Labels: w.cfg.Labels, Capacity: w.cfg.Capacity, Seen: w.cfg.Now()}
	for id := range w.running {
		info.Running = append(info.Running, id)
	}
	return info
}

// Run registers the worker and runs jobs until ctx ends; then it stops
// taking jobs, finishes or gives back (WorkerConfig.Requeue) the running
// ones, deregisters and returns nil. It fails at once when the first
// registration fails.
func (w *Worker) Run(ctx context.Context) error {
	if err := w.cfg.Registry.Register(ctx, w.info()); err != nil {
		return fmt.Errorf("register worker %s: %w", w.cfg.Name, err)
	}
	// Jobs run on their own context: a shutdown that finishes them must
	// not cancel them.
	jobCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelJobs()
	var jobs sync.WaitGroup
	stopRefresh := w.every(func() {
		// Bounded, so that a refresh stuck on a server that does not
		// answer (a cluster electing leaders) is tried again at the next
		// beat instead of letting the registration expire, and a shutdown
		// does not wait for it.
		rctx, cancel := context.WithTimeout(jobCtx, 2*w.cfg.Heartbeat)
		defer cancel()
		if err := w.cfg.Registry.Register(rctx, w.info()); err != nil {
			w.cfg.Log(fmt.Sprintf("refresh the registration: %v", err))
		}
	})
	slots := make(chan struct{}, w.cfg.Capacity)
	for ctx.Err() == nil {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		d, err := w.cfg.Queue.Take(ctx)
		if err != nil {
			<-slots
			if ctx.Err() == nil {
				w.cfg.Log(fmt.Sprintf("take a job: %v", err))
				sleep(ctx, w.cfg.Heartbeat)
			}
			continue
		}
		if ctx.Err() != nil { // taken as the shutdown began
			w.nak(d, 0)
			<-slots
			break
		}
		if j := d.Job(); !Matches(w.cfg.Labels, j.Labels) {
			// Leave it to a worker that has the labels.
			w.nak(d, w.cfg.Heartbeat/4)
			<-slots
			continue
		}
		jobs.Go(func() {
			defer func() { <-slots }()
			w.run(jobCtx, ctx.Done(), d)
		})
	}
	if w.cfg.Requeue {
		cancelJobs()
	}
	jobs.Wait()
	stopRefresh()
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := w.cfg.Registry.Deregister(dctx, w.cfg.Name); err != nil {
		w.cfg.Log(fmt.Sprintf("deregister: %v", err))
	}
	return nil
}

// every runs f once a heartbeat on its own goroutine until the returned
// stop, which waits for it, is called; stop may be called more than once.
func (w *Worker) every(f func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(w.cfg.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				f()
			}
		}
	})
	return sync.OnceFunc(func() {
		close(done)
		wg.Wait()
	})
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (w *Worker) nak(d Delivery, delay time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Nak(ctx, delay); err != nil {
		w.cfg.Log(fmt.Sprintf("give job %s back: %v", d.Job().ID, err))
	}
}

// bounded returns ctx bounded for one piece of bookkeeping: 20 heartbeats.
func (w *Worker) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, 20*w.cfg.Heartbeat)
}

// publish publishes e, retrying for 20 heartbeats: an event lost would
// leave the lead without its progress. It reports whether e went out.
func (w *Worker) publish(ctx context.Context, e Event) bool {
	ctx, cancel := w.bounded(ctx)
	defer cancel()
	return w.publishUntil(ctx, e)
}

// publishUntil publishes e, retrying until it is out or ctx ends, and
// reports whether it went out. A result too large for the queue is
// replaced by a failure saying so.
func (w *Worker) publishUntil(ctx context.Context, e Event) bool {
	e.Worker, e.Time = w.cfg.Name, w.cfg.Now()
	defer w.cfg.OnEvent(e) // after it is out: what the worker shows, the lead can see
	shrunk := false
	for {
		err := w.cfg.Queue.Publish(ctx, e)
		if errors.Is(err, ErrTooLarge) {
			// Retrying cannot help; but the lead must still learn how the
			// run ended.
			w.cfg.Log(fmt.Sprintf("publish %s of job %s: %v", e.Kind, e.JobID, err))
			if e.Result == nil || shrunk {
				return false
			}
			shrunk = true
			e.Result = &Result{Usage: e.Result.Usage, Models: e.Result.Models, // what it spent still counts
				Error: fmt.Sprintf("the result of %d bytes is larger than the queue carries (%v)", len(e.Result.Text)+len(e.Result.Error), err)}
			continue
		}
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			w.cfg.Log(fmt.Sprintf("publish %s of job %s: %v", e.Kind, e.JobID, err))
			return false
		}
		w.cfg.Log(fmt.Sprintf("publish %s of job %s (retrying): %v", e.Kind, e.JobID, err))
		sleep(ctx, w.cfg.Heartbeat/4)
	}
}

// watchStop calls stop when the lead stops job id, until ctx ends. A
// watch that ends or fails while the job runs (its server went away) is
// made again a heartbeat later, and so is one that stays open but
// delivers nothing of what the queue holds (jobWatch.stalled); events
// replay from the first, so a stop is never missed.
func (w *Worker) watchStop(ctx context.Context, id string, stop func()) {
	jw := newJobWatch(ctx, w.cfg.Queue, id, w.cfg.Heartbeat, w.cfg.Log)
	if !jw.again() {
		return
	}
	defer jw.close()
	tick := time.NewTicker(w.cfg.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-jw.events:
			if !ok {
				w.cfg.Log(fmt.Sprintf("watch job %s for a stop: the watch ended; watching again", id))
				if sleep(ctx, w.cfg.Heartbeat); !jw.again() {
					return
				}
				continue
			}
			jw.heard(e)
			if e.Kind == EventCancel {
				stop()
				return
			}
		case <-tick.C:
			if jw.stalled(ctx) && !jw.again() {
				return
			}
		}
	}
}

// afterStop returns ctx ending 20 heartbeats after stopping is closed (the
// worker shuts down): the bound of what must not be given up while the
// worker runs, the result of a job above all.
func (w *Worker) afterStop(ctx context.Context, stopping <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-stopping:
			sleep(ctx, 20*w.cfg.Heartbeat)
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// finish publishes the result event e of a job and only then settles the
// job's delivery with settle (Ack, or Term for a job not run again): a job
// settled before its result is out would end nowhere, as the lead waits
// for a result from a worker that is still alive. The result is retried as
// long as the worker runs (and 20 heartbeats into its shutdown) while the
// caller keeps the delivery alive with heartbeats; if it still cannot go
// out, the delivery is left unsettled, so that the queue hands the job out
// again after its heartbeat timeout and the next worker reports it (or, if
// attempts remain, runs it).
func (w *Worker) finish(ctx context.Context, stopping <-chan struct{}, d Delivery, e Event, settle func(context.Context) error) {
	pctx, cancel := w.afterStop(ctx, stopping)
	defer cancel()
	if !w.publishUntil(pctx, e) {
		w.cfg.Log(fmt.Sprintf("job %s: its result could not be published; it is left to the queue, which hands it out again after its heartbeat timeout", e.JobID))
		return
	}
	sctx, cancel := w.bounded(ctx)
	defer cancel()
	for {
		err := settle(sctx)
		if err == nil {
			return
		}
		if sctx.Err() != nil {
			w.cfg.Log(fmt.Sprintf("settle job %s after its result: %v", e.JobID, err))
			return
		}
		w.cfg.Log(fmt.Sprintf("settle job %s after its result (retrying): %v", e.JobID, err))
		sleep(sctx, w.cfg.Heartbeat/4)
	}
}

// run runs one delivered job; stopping is closed when the worker begins to
// shut down.
func (w *Worker) run(ctx context.Context, stopping <-chan struct{}, d Delivery) {
	j := d.Job()
	// Bookkeeping outlives a canceled run: give back, ack, publish.
	admin := context.WithoutCancel(ctx)
	sctx, cancel := w.bounded(admin)
	attempt, err := d.Start(sctx, w.cfg.Name)
	cancel()
	if err != nil {
		w.cfg.Log(fmt.Sprintf("start job %s: %v", j.ID, err))
		w.nak(d, w.cfg.Heartbeat)
		return
	}
	// The job stays with this worker until its delivery is settled: while
	// it runs and while its result waits for the queue.
	stopBeat := w.every(func() {
		bctx, cancel := w.bounded(admin)
		defer cancel()
		if err := d.InProgress(bctx); err != nil {
			w.cfg.Log(fmt.Sprintf("heartbeat of job %s: %v", j.ID, err))
		}
	})
	defer stopBeat()
	if attempt > j.MaxAttempts {
		// An earlier worker took it and vanished; the job may not run again.
		msg := fmt.Sprintf("the job was not run again: a worker running it was lost (no heartbeat), and it may run at most %d time(s)", j.MaxAttempts)
		w.finish(admin, stopping, d, Event{Kind: EventResult, JobID: j.ID, Attempt: attempt, Result: &Result{Error: msg}}, d.Term)
		return
	}
	w.mu.Lock()
	w.running[j.ID] = true
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.running, j.ID)
		w.mu.Unlock()
	}()
	w.publish(admin, Event{Kind: EventStarted, JobID: j.ID, Attempt: attempt})
	// The lead may stop the job: watch its events for EventCancel.
	runCtx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	go w.watchStop(runCtx, j.ID, func() { cancelRun(errStoppedByLead) })
	start := w.cfg.Now()
	var pmu sync.Mutex // progress may be called from several goroutines
	res := w.cfg.Run(runCtx, j, func(text string, u Usage) {
		pmu.Lock()
		defer pmu.Unlock()
		w.publish(admin, Event{Kind: EventProgress, JobID: j.ID, Attempt: attempt, Text: text, Usage: u})
	})
	if errors.Is(context.Cause(runCtx), errStoppedByLead) {
		res = Result{Error: "stopped by the lead", Usage: res.Usage, Models: res.Models}
	} else if ctx.Err() != nil { // shutting down with requeue
		w.publish(admin, Event{Kind: EventRequeued, JobID: j.ID, Attempt: attempt, Text: "worker " + w.cfg.Name + " shut down; the job goes back to the queue"})
		stopBeat()
		w.nak(d, 0)
		return
	}
	if res.Usage.Duration == 0 {
		res.Usage.Duration = w.cfg.Now().Sub(start)
	}
	w.finish(admin, stopping, d, Event{Kind: EventResult, JobID: j.ID, Attempt: attempt, Usage: res.Usage, Result: &res}, d.Ack)
}
