// Command troupe is the troupe command line: it inspects and operates
// teams, inboxes and task lists for people and scripts.
//
// Exit status: 0 on success, 1 when a command fails, 2 for a malformed
// command line, 3 when `inbox send` cannot tell whether its message was
// delivered, 6 when a budget limit (--max-budget-usd, --max-tokens)
// stopped a run.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/troupe-dev/troupe/internal/termtext"
)

// version is set at link time: go build -ldflags "-X main.version=v1.2.3".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, restore the default handling so that a second
	// one ends a command that does not stop.
	context.AfterFunc(ctx, stop)
	m := &Main{Version: version, KeepProcs: true}
	err := m.Run(ctx, os.Args[1:])
	stop()
	if err == nil {
		return
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
