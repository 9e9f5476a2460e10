// Command troupe is the troupe command line: it inspects and operates
// teams, inboxes and task lists for people and scripts.
//
// Exit status: 0 on success, 1 when a command fails, 2 for a malformed
// command line, 3 when `inbox send` cannot tell whether its message was
// delivered, 6 when a budget limit (--max-budget-usd, --max-tokens)
// stopped a run, 130 (SIGINT) or 143 (SIGTERM) when a signal stopped a
// run (after its clean shutdown).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/troupe-dev/troupe/internal/termtext"
)

// version is set at link time: go build -ldflags "-X main.version=v1.2.3".
var version = "dev"

func main() {
	ctx, stop := notifyContext(context.Background())
	m := &Main{Version: version, KeepProcs: true}
	err := m.Run(ctx, os.Args[1:])
	stop()
	if err == nil {
		return // a command whose normal end is a signal (inbox watch)
	}
	var sig *signalled
	if errors.As(context.Cause(ctx), &sig) {
		// The run stopped because of the signal, whatever its error says
		// (a cancelled call, a cut stream): the signal's conventional status.
		fmt.Fprintf(os.Stderr, "troupe: %v\n", sig)
		os.Exit(128 + int(sig.sig))
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		os.Exit(ee.Code) // the command printed its result
	}
	fmt.Fprintf(os.Stderr, "troupe: %s\n", termtext.Clean(err.Error())) // errors quote stored names and text
	var ue *UsageError
	if errors.As(err, &ue) {
		if ue.Cmd != "" {
			fmt.Fprintf(os.Stderr, "Run '%s --help' for usage.\n", ue.Cmd)
		}
		os.Exit(2)
	}
	os.Exit(1)
}

// signalled is the cause of main's context when SIGINT or SIGTERM ended
// it. It is a cancellation (errors.Is context.Canceled), as the signal
// package's own cause is.
type signalled struct{ sig syscall.Signal }

func (s *signalled) Error() string {
	if s.sig == syscall.SIGTERM {
		return "interrupted (SIGTERM)"
	}
	return "interrupted (SIGINT)"
}

func (s *signalled) Is(target error) bool { return target == context.Canceled }

// notifyContext is signal.NotifyContext for SIGINT and SIGTERM, with the
// signal as the context's cause. After the first signal the default
// handling is back, so that a second one ends a command that does not
// stop.
func notifyContext(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			sig, _ := s.(syscall.Signal)
			cancel(&signalled{sig: sig})
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
		})
	}
}
