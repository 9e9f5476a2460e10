package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// UsageError reports a malformed command line: an unknown command or flag,
// a missing or extra argument, or a value that fails validation before any
// store is touched. troupe exits with status 2 for it.
type UsageError struct {
	Cmd string // command path, such as "troupe task update"
	Err error
}

func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a *UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// ExitError ends the process with Code after the command has printed its
// result; main prints nothing more for it. `troupe permissions check`
// uses it for deny (4) and ask (5).
type ExitError struct {
	Code int
	Msg  string
}

// Error returns the message; main does not print it.
func (e *ExitError) Error() string { return e.Msg }

// ExitOutcomeUnknown is the status of `troupe inbox send` when the store
// cannot tell whether the message was delivered (mailbox.ErrOutcomeUnknown).
const ExitOutcomeUnknown = 3

// Group returns a parent command that only holds subcommands. Run without
// a subcommand it prints its help; with an unknown one it is a usage error.
func Group(use, short string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ArbitraryArgs,
		// Suggest commands within two edits, as cobra does for the root.
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
			}
			return &UsageError{Cmd: cmd.CommandPath(), Err: errors.New(msg)}
		},
	}
	c.AddCommand(subs...)
	return c
}

// Positional returns an Args validator for the named arguments; names in
// square brackets are optional. Its errors name the argument.
func Positional(names ...string) cobra.PositionalArgs {
	required := 0
	for _, n := range names {
		if !strings.HasPrefix(n, "[") {
			required++
		}
	}
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < required {
			return &UsageError{Cmd: cmd.CommandPath(), Err: fmt.Errorf("missing argument %s", strings.Join(names[len(args):required], " "))}
		}
		if len(args) > len(names) {
			return &UsageError{Cmd: cmd.CommandPath(), Err: fmt.Errorf("unexpected argument %q", args[len(names)])}
		}
		return nil
	}
}
