package kit

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/remote"
)

// JobQueue is the queue a remote worker takes jobs from and registers
// with (store/nats's job queue is both).
type JobQueue interface {
	remote.Queue
	remote.Registry
}

// RemoteWorker is a remote-agent host (troupe worker): it registers as
// Name, takes the jobs that Labels and Capacity allow from Queue, runs
// each on an agent Jobs builds, and says what happens through Say.
type RemoteWorker struct {
	Jobs      RemoteJobs
	Name      string
	Labels    []string
	Capacity  int
	Heartbeat time.Duration
	Requeue   bool // on shutdown, give running jobs back instead of finishing them
	Queue     JobQueue
	// Where names the store, for the first line.
	Where string
	// Say prints one line (a format and its arguments); nil says nothing.
	Say func(format string, args ...any)
	// Wrap, when set, wraps the run of every job (telemetry makes it a
	// span).
	Wrap func(remote.RunFunc) remote.RunFunc
}

// Run runs the worker until ctx ends. A configuration that cannot work
// (a bad name, labels or capacity) is an error before anything starts.
func (w RemoteWorker) Run(ctx context.Context) error {
	say := w.Say
	if say == nil {
		say = func(string, ...any) {}
	}
	run := remote.RunFunc(w.Jobs.Do)
	if w.Wrap != nil {
		run = w.Wrap(run)
	}
	rw, err := remote.NewWorker(remote.WorkerConfig{Name: w.Name, Labels: w.Labels, Capacity: w.Capacity, Queue: w.Queue, Registry: w.Queue,
		Run: run, Heartbeat: w.Heartbeat, Requeue: w.Requeue, Now: w.Jobs.Run.Now,
		Log:     func(msg string) { say("worker %s: %s", w.Name, msg) },
		OnEvent: func(e remote.Event) { say("%s", e) }})
	if err != nil {
		return err
	}
	say("worker %s on %s: labels [%s], capacity %d, folder %s", w.Name, w.Where, strings.Join(w.Labels, ","), w.Capacity, w.Jobs.Cwd)
	err = rw.Run(ctx)
	say("worker %s stopped", w.Name)
	return err
}

// Sayer returns a Say that writes each line to out after the time of
// day (now's), one line at a time however many goroutines say.
func Sayer(out io.Writer, now func() time.Time) func(format string, args ...any) {
	if now == nil {
		now = time.Now
	}
	var mu sync.Mutex
	return func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, "%s %s\n", now().Format("15:04:05"), fmt.Sprintf(format, args...))
	}
}
