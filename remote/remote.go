// Package remote runs sub-agents on remote workers: a lead submits a Job to
// a Queue, a Worker on another machine (troupe worker) takes it, runs an
// agent on it in its own working folder, streams Progress events and
// publishes the Result, and the lead's Client tracks the job as a
// remote_agent task in its task.Registry, ending in the task's normal
// <task-notification> with the result and usage.
//
// The package holds the job model, the interfaces a transport implements
// (Queue for jobs and their events, Registry for the workers) and the logic
// on both sides (Worker, Client). It imports no transport: store/nats
// implements Queue and Registry on JetStream, remote/remotetest in memory.
//
// # Delivery guarantee
//
// A job is delivered at least once and run at most Job.MaxAttempts times.
// Submit returns after the queue stored the job. A worker holding a job
// keeps it alive with heartbeats (Delivery.InProgress); when they stop (the
// worker crashed, was killed or lost its network) the queue hands the job
// out again after its heartbeat timeout. Each run is counted by
// Delivery.Start before the agent begins; a delivery past MaxAttempts is not
// run: the worker publishes a failed Result saying the earlier worker was
// lost, and drops the job. A job returned on purpose (Delivery.Nak: label
// mismatch, a worker shutting down with requeue) does not count as a run.
//
// A worker settles a job (Ack, or Term for one not run again) only after
// its Result is published, and keeps the job alive with heartbeats while
// the Result waits for the queue (a cluster electing a new leader for the
// events' stream): the Result is retried as long as the worker runs and 20
// heartbeats into its shutdown. A job whose Result still could not go out
// is left unsettled, so the queue hands it out again and the next worker
// reports it (or runs it, if attempts remain): never a live worker and a
// lead waiting on a result that was dropped.
//
// On the lead's side the Client watches the registry of workers: when the
// worker running its job is gone (its registration expired), it fails the
// task at once (OnLostFail, MaxAttempts 1) or notes the loss in the task
// and waits for the next run (OnLostRequeue, MaxAttempts 2), failing the task
// if that was the last attempt. Under OnLostFail a job that waits while no
// live worker could take it (its worker died before reporting the start,
// or every worker is gone) fails too, after two checks. So a lost worker
// always ends in a failed task or in one more run, never in silence; under
// OnLostRequeue a job waits for a live worker as long as the lead runs. A Result published just before
// a worker was declared lost may still arrive; the first Result for a job
// wins, later ones are ignored.
//
// # A lead started again
//
// A lead that ended without stopping its jobs (a crash, a kill) can take
// them up in its next run: the Client publishes EventSubmitted once a job
// is stored, so the queue holds an event of every job, queued or running,
// for as long as it keeps events; ClientConfig.OnSubmit lets a session
// record keep each job, and Client.Reattach tracks a recorded job again as
// a task with the same id, its events replayed from the first: one that
// ended meanwhile ends the task at once with its result, one still queued
// or running is tracked to its end. A job the queue holds nothing of
// (Recaller says ErrUnknownJob) cannot be taken up.
//
// Stopping the task on the lead's side (TaskStop) publishes EventCancel:
// the worker running the job cancels its agent, reports it stopped and
// drops the job; a job not started yet is dropped when a worker starts it.
package remote

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/task"
)

// Defaults.
const (
	// DefaultHeartbeat is how often a worker refreshes its registration
	// and its jobs' deliveries.
	DefaultHeartbeat = 5 * time.Second
	// MaxPromptLen bounds a job's prompt.
	MaxPromptLen = 1 << 20
	// MaxLabels bounds a job's or worker's labels.
	MaxLabels = 16
)

// Errors.
var (
	ErrClosed   = errors.New("remote: closed")
	ErrBadJob   = errors.New("remote: bad job")
	ErrNoWorker = errors.New("remote: no worker can take the job")
	// ErrUnknownJob is a job the queue holds no event of: never
	// submitted there, or its events expired.
	ErrUnknownJob = errors.New("remote: the queue holds no event of the job")
	// ErrTooLarge is a Publish of an event larger than the queue carries;
	// retrying cannot help.
	ErrTooLarge = errors.New("remote: event too large for the queue")
)

var (
	idPattern    = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	labelPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
)

// Job is one sub-agent run asked of a worker.
type Job struct {
	ID          string    `json:"id"` // [A-Za-z0-9_-], at most 64 characters
	Prompt      string    `json:"prompt"`
	Description string    `json:"description"`
	Model       string    `json:"model,omitempty"`  // "" runs the worker's model
	Labels      []string  `json:"labels,omitempty"` // a worker must have all of them
	SubmittedBy string    `json:"submitted_by,omitempty"`
	Submitted   time.Time `json:"submitted"`
	// MaxAttempts is how many times the job may run (at least 1).
	MaxAttempts int `json:"max_attempts"`
	// Trace is the W3C trace context (a traceparent) of the lead's span
	// that submitted the job: the worker's span of its run is its child.
	Trace string `json:"traceparent,omitempty"`
}

// Validate reports, naming the field, what is wrong with j.
func (j Job) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadJob, fmt.Sprintf(format, args...))
	}
	switch {
	case !idPattern.MatchString(j.ID):
		return bad("id %q: want 1-64 characters from [A-Za-z0-9_-]", j.ID)
	case strings.TrimSpace(j.Prompt) == "":
		return bad("job %s: empty prompt", j.ID)
	case len(j.Prompt) > MaxPromptLen:
		return bad("job %s: prompt of %d bytes is longer than %d", j.ID, len(j.Prompt), MaxPromptLen)
	case j.MaxAttempts < 1:
		return bad("job %s: max attempts %d: want at least 1", j.ID, j.MaxAttempts)
	case len(j.Trace) > 512:
		return bad("job %s: trace context of %d bytes: want at most 512", j.ID, len(j.Trace))
	}
	return CheckLabels(j.Labels)
}

// CheckName reports a worker name that is not 1-64 characters of
// [A-Za-z0-9_-].
func CheckName(name string) error {
	if !idPattern.MatchString(name) {
		return fmt.Errorf("remote: worker name %q: want 1-64 characters from [A-Za-z0-9_-]", name)
	}
	return nil
}

// CheckLabels reports a label that is not 1-64 characters of
// [A-Za-z0-9_.-], or too many labels.
func CheckLabels(labels []string) error {
	if len(labels) > MaxLabels {
		return fmt.Errorf("%w: %d labels, at most %d", ErrBadJob, len(labels), MaxLabels)
	}
	for _, l := range labels {
		if !labelPattern.MatchString(l) {
			return fmt.Errorf("%w: label %q: want 1-64 characters from [A-Za-z0-9_.-]", ErrBadJob, l)
		}
	}
	return nil
}

// JoinLabels returns the labels of a and then those of b not in a: the
// labels a lead asks of every job joined with those of one call.
func JoinLabels(a, b []string) []string {
	out := slices.Clip(a)
	for _, l := range b {
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// Matches reports whether a worker with labels have may take a job that
// wants labels want: it has every one of them.
func Matches(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// Usage is what a run spent.
type Usage = task.Usage

// Result is how a run ended. Error is set when it failed.
type Result struct {
	Text  string `json:"text"`
	Usage Usage  `json:"usage"`
	Error string `json:"error,omitempty"`
	// Models is what the run spent, by model: the lead adds it to its
	// session's usage and budget (ClientConfig.Spent).
	Models []ModelUsage `json:"models,omitempty"`
}

// ModelUsage is what a run spent on one model.
type ModelUsage struct {
	Model string    `json:"model"`
	Usage llm.Usage `json:"usage"`
	Calls int       `json:"calls"`
}

// Check reports, naming the model, counts that are not counts.
func (m ModelUsage) Check() error {
	u := m.Usage
	if u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 || m.Calls < 0 {
		return fmt.Errorf("remote: usage of model %q: a negative count (%+v, %d calls)", m.Model, u, m.Calls)
	}
	if len(m.Model) > 256 {
		return fmt.Errorf("remote: usage of a model whose name is %d bytes long", len(m.Model))
	}
	return nil
}

// EventKind says what an Event reports.
type EventKind string

// Event kinds.
const (
	EventSubmitted EventKind = "submitted" // the lead stored the job (published by the lead)
	EventStarted   EventKind = "started"   // a worker began a run
	EventProgress  EventKind = "progress"  // the run did something
	EventRequeued  EventKind = "requeued"  // the worker gave the job back (shutdown)
	EventResult    EventKind = "result"    // the run ended; Result is set
	EventCancel    EventKind = "cancel"    // the lead stopped the job (published by the lead)
)

// Event is one step of a job, published by the worker running it.
type Event struct {
	Kind    EventKind `json:"kind"`
	JobID   string    `json:"job_id"`
	Worker  string    `json:"worker"`
	Attempt int       `json:"attempt"`
	Time    time.Time `json:"time"`
	Text    string    `json:"text,omitempty"` // a progress line
	Usage   Usage     `json:"usage"`          // so far
	Result  *Result   `json:"result,omitempty"`
}

// Queue carries jobs to workers and their events back. Implementations
// are safe for concurrent use.
type Queue interface {
	// Submit stores j for a worker; it returns once the queue holds it.
	Submit(ctx context.Context, j Job) error
	// Take waits for the next job (of any labels) and hands it out.
	// Until the delivery is acked, naked or terminated, it goes out again
	// once InProgress has not been called for the queue's heartbeat
	// timeout.
	Take(ctx context.Context) (Delivery, error)
	// Publish records e in its job's events.
	Publish(ctx context.Context, e Event) error
	// Watch returns the events of a job, from its first, until ctx ends.
	Watch(ctx context.Context, jobID string) (<-chan Event, error)
}

// Recaller is a Queue that can tell what it still holds of a job, so a
// lead started again can take up the jobs an earlier run submitted.
type Recaller interface {
	// LastEvent returns the newest event of job id, or ErrUnknownJob
	// when the queue holds none.
	LastEvent(ctx context.Context, jobID string) (Event, error)
}

// Delivery is one job handed to one worker.
type Delivery interface {
	Job() Job
	// Start counts a run of the job and returns its attempt number (1 for
	// the first run).
	Start(ctx context.Context, worker string) (attempt int, err error)
	// InProgress is the heartbeat: the job stays with this worker.
	InProgress(ctx context.Context) error
	// Ack removes the job from the queue: it is done.
	Ack(ctx context.Context) error
	// Nak gives the job back, to be handed out again after delay; a run
	// counted by Start is uncounted.
	Nak(ctx context.Context, delay time.Duration) error
	// Term removes the job without running it again.
	Term(ctx context.Context) error
}

// WorkerInfo is a worker's registration.
type WorkerInfo struct {
	Name     string    `json:"name"`
	Labels   []string  `json:"labels,omitempty"`
	Capacity int       `json:"capacity"`
	Running  []string  `json:"running,omitempty"` // ids of the jobs it runs
	Seen     time.Time `json:"seen"`
}

// Registry knows the live workers. A registration not refreshed within the
// registry's time to live is gone.
type Registry interface {
	// Register adds or refreshes w.
	Register(ctx context.Context, w WorkerInfo) error
	// Deregister removes the worker name.
	Deregister(ctx context.Context, name string) error
	// List returns the live workers.
	List(ctx context.Context) ([]WorkerInfo, error)
}

// Alive reports whether the worker name is registered in reg.
func Alive(ctx context.Context, reg Registry, name string) (bool, error) {
	ws, err := reg.List(ctx)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(ws, func(w WorkerInfo) bool { return w.Name == name }), nil
}
