package remote

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/task"
)

// Policy is what the lead's Client does when the worker running its job
// is lost.
type Policy string

// Policies.
const (
	OnLostFail    Policy = "fail"    // fail the task; the job never runs again
	OnLostRequeue Policy = "requeue" // let the job run once more
)

// MaxAttempts returns how many runs p allows a job.
func (p Policy) MaxAttempts() int {
	if p == OnLostRequeue {
		return 2
	}
	return 1
}

// ClientConfig configures a Client.
type ClientConfig struct {
	Queue   Queue
	Workers Registry
	Tasks   *task.Registry
	OnLost  Policy // default OnLostFail
	// SubmittedBy names the lead in its jobs.
	SubmittedBy string
	// CheckEvery is how often a tracked job's worker is looked up in the
	// registry; default DefaultHeartbeat.
	CheckEvery time.Duration
	Now        func() time.Time
	// OnSubmit, when set, hears each job once the queue holds it, before
	// any of its events is tracked (a session record keeps it, so that a
	// later run can take the job up again with Reattach). It must not
	// block.
	OnSubmit func(Job)
	// Spent, when set, hears what a job's run spent by model (its
	// Result.Models), once, when its result comes, before its task ends:
	// the lead charges it to its session (usage ledger, budget). The
	// entries are as the worker sent them; the callee checks them
	// (ModelUsage.Check).
	Spent func(j Job, worker string, models []ModelUsage)
	// Trace, when set, starts the span of a job's submission: it returns
	// the trace context the job carries to its worker (Job.Trace) and the
	// end of the span, called with the submission's error.
	Trace func(j Job) (traceparent string, end func(error))
	// Log, when set, hears each problem the client works around (a job's
	// watch found stuck and started again).
	Log func(string)
}

// Request is a sub-agent to run remotely.
type Request struct {
	Description, Prompt, Model, ToolUseID string
	Labels                                []string
}

// Client submits jobs and tracks each as a remote_agent task.
type Client struct {
	cfg    ClientConfig
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// The workers as last listed, shared by the tracked jobs' checks so
	// that n jobs cost one registry listing per half check, not n.
	listMu   sync.Mutex
	listedAt time.Time // zero: never
	listed   []WorkerInfo
}

// NewClient checks cfg and returns a client.
func NewClient(cfg ClientConfig) (*Client, error) {
	if cfg.Queue == nil || cfg.Workers == nil || cfg.Tasks == nil {
		return nil, errors.New("remote: a client needs a queue, a worker registry and a task registry")
	}
	switch cfg.OnLost {
	case "":
		cfg.OnLost = OnLostFail
	case OnLostFail, OnLostRequeue:
	default:
		return nil, fmt.Errorf("remote: policy %q: want %s or %s", cfg.OnLost, OnLostFail, OnLostRequeue)
	}
	if cfg.CheckEvery <= 0 {
		cfg.CheckEvery = DefaultHeartbeat
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = func(string) {}
	}
	c := &Client{cfg: cfg}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

// Close stops tracking; the tasks stay as they are.
func (c *Client) Close() {
	c.cancel()
	c.wg.Wait()
}

// Submit checks that a live worker can take r, submits it as a job and
// registers it as a pending remote_agent task whose id is the job's; the
// task runs when a worker starts the job and ends with its result.
func (c *Client) Submit(ctx context.Context, r Request) (task.State, error) {
	if err := CheckLabels(r.Labels); err != nil {
		return task.State{}, err
	}
	ws, err := c.cfg.Workers.List(ctx)
	if err != nil {
		return task.State{}, fmt.Errorf("list the workers: %w", err)
	}
	var names []string
	fit := false
	for _, w := range ws {
		names = append(names, fmt.Sprintf("%s [%s]", w.Name, strings.Join(w.Labels, ",")))
		fit = fit || Matches(w.Labels, r.Labels)
	}
	if !fit {
		if len(ws) == 0 {
			return task.State{}, fmt.Errorf("%w: no worker is registered (start one with: troupe worker --store <the same NATS URL>)", ErrNoWorker)
		}
		return task.State{}, fmt.Errorf("%w: no live worker has the labels %q (workers: %s)", ErrNoWorker, r.Labels, strings.Join(names, "; "))
	}
	id := task.NewID(task.RemoteAgent)
	j := Job{ID: string(id), Prompt: r.Prompt, Description: r.Description, Model: r.Model, Labels: r.Labels,
		SubmittedBy: c.cfg.SubmittedBy, Submitted: c.cfg.Now(), MaxAttempts: c.cfg.OnLost.MaxAttempts()}
	var end func(error)
	if c.cfg.Trace != nil {
		j.Trace, end = c.cfg.Trace(j)
	}
	st, err := c.submit(ctx, j, r)
	if end != nil {
		end(err)
	}
	return st, err
}

// submit is Submit's part from a job made: checked, watched, registered
// as a task, submitted and tracked.
func (c *Client) submit(ctx context.Context, j Job, r Request) (task.State, error) {
	if err := j.Validate(); err != nil {
		return task.State{}, err
	}
	return c.follow(ctx, j, r.ToolUseID, true)
}

// Reattach takes up job j, submitted by an earlier run of the lead, as a
// remote_agent task of this client's registry with the job's id: its
// events are replayed from the first, so a job that ended meanwhile ends
// the task at once with its result (and notification), and a job still
// queued or running is tracked to its end as if submitted here. It
// returns ErrUnknownJob when the queue holds no event of j (it expired,
// or the queue is another one), and fails when the queue cannot tell
// (it is not a Recaller, or is unreachable). j needs its ID, and its
// Labels and MaxAttempts as submitted; its prompt may be empty.
func (c *Client) Reattach(ctx context.Context, j Job) (task.State, error) {
	rc, ok := c.cfg.Queue.(Recaller)
	if !ok {
		return task.State{}, fmt.Errorf("reattach job %s: the queue cannot look jobs up", j.ID)
	}
	if !idPattern.MatchString(j.ID) || task.ID(j.ID).TypeOf() != task.RemoteAgent {
		return task.State{}, fmt.Errorf("%w: reattach: id %q is not a remote agent's task id", ErrBadJob, j.ID)
	}
	if j.MaxAttempts < 1 {
		j.MaxAttempts = c.cfg.OnLost.MaxAttempts()
	}
	if err := CheckLabels(j.Labels); err != nil {
		return task.State{}, err
	}
	if st, ok := c.cfg.Tasks.Get(task.ID(j.ID)); ok {
		return st, fmt.Errorf("reattach job %s: its task is already in the registry (%s)", j.ID, st.Status)
	}
	if _, err := rc.LastEvent(ctx, j.ID); err != nil {
		return task.State{}, fmt.Errorf("reattach job %s: %w", j.ID, err)
	}
	return c.follow(ctx, j, "", false)
}

// follow registers j as a pending remote_agent task and tracks its
// events; with submit it first submits j (with EventSubmitted before it,
// and OnSubmit after).
func (c *Client) follow(ctx context.Context, j Job, toolUseID string, submit bool) (task.State, error) {
	id := task.ID(j.ID)
	// Watch before submitting: no event can come before the job exists.
	wctx, stop := context.WithCancel(c.ctx)
	w := newJobWatch(wctx, c.cfg.Queue, j.ID, c.cfg.CheckEvery, c.cfg.Log)
	if err := w.watch(); err != nil {
		stop()
		return task.State{}, fmt.Errorf("watch job %s: %w", j.ID, err)
	}
	st, err := c.cfg.Tasks.Register(task.State{ID: id, Type: task.RemoteAgent, Status: task.Pending,
		Description: j.Description, ToolUseID: toolUseID,
		Detail: &task.Remote{RemoteType: "remote-agent", SessionID: j.ID, Command: j.Prompt, Title: j.Description, PollStart: j.Submitted}},
		func(ctx context.Context, _ task.State) error {
			// The job is still followed after the stop: its worker's last
			// result carries what it spent (ClientConfig.Spent).
			err := c.cfg.Queue.Publish(ctx, Event{Kind: EventCancel, JobID: j.ID, Worker: c.cfg.SubmittedBy, Time: c.cfg.Now()})
			if err != nil {
				return fmt.Errorf("tell the worker to stop job %s: %w", j.ID, err)
			}
			return nil
		})
	if err != nil {
		stop()
		return task.State{}, err
	}
	if submit {
		// The job's first event, before any worker can see the job: the
		// queue then holds an event of a job no worker took yet, and a
		// later run can take it up (Reattach). Best effort: a job
		// without it still runs, only it is not found again before it
		// starts. A job whose submit fails below is never recorded, so
		// its lone event is never looked for.
		c.cfg.Queue.Publish(ctx, Event{Kind: EventSubmitted, JobID: j.ID, Worker: c.cfg.SubmittedBy, Time: c.cfg.Now()})
		if err := c.cfg.Queue.Submit(ctx, j); err != nil {
			stop()
			c.cfg.Tasks.Finish(id, task.Failed, withRemote(func(d *task.Remote) { d.Error = "submit: " + err.Error() }))
			return task.State{}, fmt.Errorf("submit job %s: %w", j.ID, err)
		}
		if c.cfg.OnSubmit != nil {
			c.cfg.OnSubmit(j)
		}
	}
	c.wg.Go(func() {
		defer stop()
		c.track(wctx, j, w)
	})
	return st, nil
}

// withRemote returns an update of a remote_agent task's detail by f.
func withRemote(f func(*task.Remote)) func(task.State) task.State {
	return func(s task.State) task.State {
		d, ok := s.Detail.(*task.Remote)
		if !ok {
			return s
		}
		nd := *d
		f(&nd)
		s.Detail = &nd
		return s
	}
}

// track follows job j's events, from watch w, into its task until the
// task ends.
func (c *Client) track(ctx context.Context, j Job, w *jobWatch) {
	defer w.close()
	id := task.ID(j.ID)
	tick := time.NewTicker(c.cfg.CheckEvery)
	defer tick.Stop()
	var worker string // the worker of the current run, "" between runs
	attempt := 0
	misses := 0 // checks in a row that found the worker gone
	idle := 0   // checks in a row that found no worker for the job
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-w.events:
			if !ok {
				// The watch ended while the job is still tracked (the
				// queue's consumer gave up): watch again. Events come
				// again from the first; those already seen change
				// nothing, and a job never ends unseen.
				if !w.again() {
					return
				}
				continue
			}
			w.heard(e)
			misses = 0
			switch e.Kind {
			case EventStarted:
				if e.Attempt < attempt {
					continue // a stale run
				}
				worker, attempt = e.Worker, e.Attempt
				c.cfg.Tasks.Update(id, func(s task.State) task.State {
					s = withRemote(func(d *task.Remote) {
						d.Worker, d.Attempt = e.Worker, e.Attempt
						d.Progress = fmt.Sprintf("started on worker %s (attempt %d of %d)", e.Worker, e.Attempt, j.MaxAttempts)
					})(s)
					if s.Status == task.Pending {
						s.Status = task.Running
					}
					return s
				})
			case EventProgress:
				c.cfg.Tasks.Update(id, withRemote(func(d *task.Remote) { d.Progress, d.Usage = e.Text, e.Usage }))
			case EventRequeued:
				worker = ""
				c.cfg.Tasks.Update(id, withRemote(func(d *task.Remote) { d.Progress, d.Worker = e.Text, "" }))
			case EventResult:
				if e.Result == nil {
					continue
				}
				r := *e.Result
				if c.cfg.Spent != nil && len(r.Models) > 0 {
					c.cfg.Spent(j, e.Worker, r.Models)
				}
				status := task.Completed
				if r.Error != "" {
					status = task.Failed
				}
				c.finish(id, status, func(d *task.Remote) {
					if e.Worker != "" && e.Attempt >= d.Attempt {
						d.Worker, d.Attempt = e.Worker, e.Attempt
					}
					d.Result, d.Error, d.Usage = r.Text, r.Error, r.Usage
				})
				return
			}
		case <-tick.C:
			if w.stalled(ctx) {
				if !w.again() {
					return
				}
				continue
			}
			if worker == "" {
				// Waiting for a worker: under policy fail, a job no live
				// worker can take (its worker died before it reported the
				// start, or every worker is gone) fails rather than wait.
				if c.cfg.OnLost != OnLostFail || !c.noWorkerFor(ctx, j, &idle) {
					continue
				}
				c.cancel1(j)
				c.finish(id, task.Failed, func(d *task.Remote) {
					d.Error = fmt.Sprintf("no live worker can run the job (labels %q): the workers were lost or stopped before one reported starting it; it is not run (policy %s)", j.Labels, c.cfg.OnLost)
				})
				return
			}
			ws, err := c.liveWorkers(ctx)
			alive := slices.ContainsFunc(ws, func(w WorkerInfo) bool { return w.Name == worker })
			if err != nil || alive {
				misses = 0 // the registry unreachable is not the worker lost
				continue
			}
			// Gone on two checks in a row: a worker that ended cleanly has
			// deregistered after publishing its result, which may still be
			// on its way.
			if misses++; misses < 2 {
				continue
			}
			misses = 0
			lost := worker
			worker = ""
			if attempt < j.MaxAttempts {
				c.cfg.Tasks.Update(id, withRemote(func(d *task.Remote) {
					d.Worker = ""
					d.Progress = fmt.Sprintf("worker %s was lost (no heartbeat) during attempt %d; the job is requeued for attempt %d of %d", lost, attempt, attempt+1, j.MaxAttempts)
				}))
				continue
			}
			c.finish(id, task.Failed, func(d *task.Remote) {
				d.Error = fmt.Sprintf("worker %s was lost (no heartbeat) during attempt %d of %d; the job is not run again (policy %s)", lost, attempt, j.MaxAttempts, c.cfg.OnLost)
			})
			return
		}
	}
}

func (c *Client) finish(id task.ID, status task.Status, f func(*task.Remote)) {
	if s, ok := c.cfg.Tasks.Get(id); ok && s.Status == task.Pending {
		// It ended before it was seen starting (a result for a job that
		// was not run again): pass through running.
		c.cfg.Tasks.Update(id, func(s task.State) task.State { s.Status = task.Running; return s })
	}
	c.cfg.Tasks.Finish(id, status, withRemote(f))
}

// noWorkerFor reports whether no live worker could take j on two checks in
// a row, counted in *idle; an unreachable registry counts as a worker.
func (c *Client) noWorkerFor(ctx context.Context, j Job, idle *int) bool {
	ws, err := c.liveWorkers(ctx)
	if err != nil {
		*idle = 0
		return false
	}
	for _, w := range ws {
		if Matches(w.Labels, j.Labels) {
			*idle = 0
			return false
		}
	}
	*idle++
	return *idle >= 2
}

// liveWorkers lists the registry's workers, reusing a listing younger than
// half a check for the checks of every tracked job. A failed listing is
// not kept.
func (c *Client) liveWorkers(ctx context.Context) ([]WorkerInfo, error) {
	c.listMu.Lock()
	defer c.listMu.Unlock()
	if !c.listedAt.IsZero() && time.Since(c.listedAt) < c.cfg.CheckEvery/2 {
		return c.listed, nil
	}
	ws, err := c.cfg.Workers.List(ctx)
	if err != nil {
		return nil, err
	}
	c.listed, c.listedAt = ws, time.Now()
	return ws, nil
}

// cancel1 publishes EventCancel for j, so that a worker that takes it later
// drops it.
func (c *Client) cancel1(j Job) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.cfg.Queue.Publish(ctx, Event{Kind: EventCancel, JobID: j.ID, Worker: c.cfg.SubmittedBy, Time: c.cfg.Now()})
}

// StopActive stops every remote_agent task of the client's registry that
// is still pending or running, telling their workers while the
// connection is up: a lead that ends early stops its remote agents.
func (c *Client) StopActive(ctx context.Context) {
	for _, st := range c.cfg.Tasks.List() {
		if st.Type == task.RemoteAgent && st.Status.Active() {
			c.cfg.Tasks.Stop(ctx, st.ID)
		}
	}
}
