package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Spec describes a child process for a StartFunc.
type Spec struct {
	// Path is the program: a path, or a name to look up in $PATH.
	Path string
	// Args are the arguments, without the program name.
	Args []string
	// Env holds KEY=value entries added to this process's environment.
	Env []string
	// Dir is the working folder; empty means the current one.
	Dir string
	// Stdin, Stdout and Stderr are the child's standard files; nil means
	// the null device.
	Stdin, Stdout, Stderr *os.File
	// ExtraFiles are inherited as file descriptors 3, 4, ...
	ExtraFiles []*os.File
}

// Process is a started child process.
type Process interface {
	// Wait waits for the process to exit and returns its state, which
	// carries its resource usage. The error is non-nil when it did not
	// exit with status 0.
	Wait() (*os.ProcessState, error)
	// Kill ends the process at once.
	Kill() error
}

// StartFunc starts a child process described by s. The process must be
// killed when ctx is done.
type StartFunc func(ctx context.Context, s Spec) (Process, error)

// Runner runs the scenarios. Exe, Start and (usually) ChildArgs are
// required; the zero value of the other fields is ready to use.
type Runner struct {
	// Exe is the program whose child mode runs troupe's writers and
	// claimers: the troupe binary, or a test binary.
	Exe string
	// ChildArgs come before the child's configuration argument, such as
	// []string{"bench", "child"}; Exe with them must call RunChild.
	ChildArgs []string
	// ChildEnv is added to the environment of Exe's children.
	ChildEnv []string
	// Start starts processes.
	Start StartFunc
	// NATS, if set, is the URL (or comma-separated URLs) of the NATS
	// server whose store is measured instead of the file store's: each run
	// works in a namespace of its own there, deleted afterwards unless
	// Keep. Only an unauthenticated server can be used so far: no
	// credentials are passed to the children.
	NATS string
	// TempDir is where each run makes its folder; empty means os.TempDir().
	TempDir string
	// Keep leaves each run's folder in place instead of removing it.
	Keep bool
	// Progress receives a line as each run starts, every ProgressEvery
	// while it runs, and when it ends. Nil discards.
	Progress io.Writer
	// ProgressEvery is the period of progress lines; zero means 2 s.
	ProgressEvery time.Duration
	// ProfileDir, if set, makes every troupe child write a CPU profile
	// there (<run>-<child>.pprof), for go tool pprof, and every team host
	// its heap and goroutine profiles once its teammates are all idle
	// (<run>-<child>-spawned-heap.pprof, ...-goroutine.pprof).
	ProfileDir string

	profiles int // profile files named so far
}

func (r *Runner) progressf(format string, args ...any) {
	if r.Progress != nil {
		fmt.Fprintf(r.Progress, format+"\n", args...)
	}
}

func (r *Runner) tick() *time.Ticker {
	d := r.ProgressEvery
	if d <= 0 {
		d = 2 * time.Second
	}
	return time.NewTicker(d)
}

func (r *Runner) check() error {
	if r.Start == nil || r.Exe == "" {
		return errors.New("bench: Runner needs Exe and Start")
	}
	return nil
}

// runDir makes a fresh folder for one run; the returned function removes it
// unless r.Keep.
func (r *Runner) runDir(prefix string) (string, func(), error) {
	dir, err := os.MkdirTemp(r.TempDir, "troupe-bench-"+prefix+"-")
	if err != nil {
		return "", nil, fmt.Errorf("make run folder: %w", err)
	}
	return dir, func() {
		if r.Keep {
			r.progressf("  kept %s", dir)
			return
		}
		os.RemoveAll(dir)
	}, nil
}
