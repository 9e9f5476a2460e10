// Package backend says where a teammate runs: in the lead's process (a
// goroutine), or as a separate troupe process in a tmux or iTerm2 pane. It
// holds the vocabulary every backend shares (Spec, Handle, Backend), the
// teammate modes, and the detection order. Implementations live in
// backend/inprocess, backend/tmux and backend/iterm2; backend/backendtest is
// the conformance suite each of them runs.
//
// This package is pure: no I/O, no processes. Detection takes the
// environment and a PATH lookup as functions.
package backend

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Names of the backends, as stored in a member's backendType.
const (
	InProcess = "in-process"
	Tmux      = "tmux"
	ITerm2    = "iterm2"
)

// Modes of --teammate-mode and the teammateMode setting.
const (
	ModeAuto      = "auto"
	ModeInProcess = InProcess
	ModeTmux      = Tmux
	ModeITerm2    = ITerm2
)

// Spec describes one teammate to start.
type Spec struct {
	// AgentID is the teammate's stable id, name@team. A backend refuses a
	// second live teammate with the same id (ErrRunning): spawning is
	// idempotent by id.
	AgentID string
	Name    string // member name
	Team    string // team name
	Color   string // team palette color name (red, blue, ...), may be empty
	Cwd     string // working folder of the teammate

	// Argv is the command a pane backend runs (argv[0] is the troupe
	// binary); each element is shell-quoted by the backend. Env is set
	// for it (a key with an empty value is written as KEY='' to mask an
	// ambient value). In-process backends ignore both.
	Argv []string
	Env  map[string]string

	// Run is what the in-process backend runs on its own goroutine; ctx
	// is cancelled by Handle.Kill. Pane backends ignore it.
	Run func(ctx context.Context) error

	// Window puts a pane teammate in a window of its own (tmux) instead of
	// a split of the shared window: the Agent tool's use_splitpane false,
	// setting teammateWindow "window". Other backends split all the same
	// and say so through their handle (Windowed).
	Window bool
}

// Windowed is implemented by the handles of pane backends that can give a
// teammate a window of its own: WindowName is that window's name, "" for a
// teammate in a split pane.
type Windowed interface {
	WindowName() string
}

// Handle is one running teammate.
type Handle interface {
	// PaneID is the pane the teammate runs in ("%12" for tmux, the
	// iTerm2 session id), or InProcess.
	PaneID() string
	// Backend is the backend's name (InProcess, Tmux, ITerm2).
	Backend() string
	// Done is closed when the teammate has ended: its goroutine
	// returned, its process exited or was killed, or its pane was
	// closed, whoever did it. Backends detect an external death within
	// a few seconds.
	Done() <-chan struct{}
	// Err is why it ended, after Done: nil for a clean exit.
	Err() error
	// Kill ends the teammate and, for pane backends, closes the pane it
	// created, and waits until Done. Killing an ended teammate is a
	// no-op.
	Kill(ctx context.Context) error
}

// Backend starts teammates.
type Backend interface {
	// Name is InProcess, Tmux or ITerm2.
	Name() string
	// Spawn starts one teammate and returns once it runs.
	Spawn(ctx context.Context, s Spec) (Handle, error)
	// Close kills every teammate this backend started (only those: a
	// pane backend never touches a pane it did not create) and waits for
	// them.
	Close(ctx context.Context) error
}

// ErrRunning is returned by Spawn for an agent id that already runs.
var ErrRunning = errors.New("backend: teammate already running")

// ErrUnavailable is returned when a backend cannot run here (no tmux, not
// in iTerm2, no it2 command).
var ErrUnavailable = errors.New("backend: not available")

// ErrClosed is returned by Spawn after Close.
var ErrClosed = errors.New("backend: closed")

// ErrKilled is Handle.Err for a teammate ended by Kill or Close.
var ErrKilled = errors.New("backend: teammate killed")

// ErrPaneGone is Handle.Err for a pane teammate whose pane (or the whole
// terminal server) went away without an exit status troupe could read: it
// was closed by someone else.
var ErrPaneGone = errors.New("backend: pane closed by someone else")

// ExitError is Handle.Err for a pane teammate whose process ended on its
// own with a non-zero status or a signal.
type ExitError struct {
	Status int // exit status, when it exited
	Signal int // signal number, when a signal killed it; 0 otherwise
	// Output is the end of what the pane showed, when the backend could
	// read it (a crash message, a usage error); may be empty.
	Output string
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("teammate process exited with status %d", e.Status)
	if e.Signal != 0 {
		msg = fmt.Sprintf("teammate process killed by signal %d", e.Signal)
	}
	if last := lastLine(e.Output); last != "" {
		msg += ": " + last
	}
	return msg
}

// lastLine returns the last non-blank line of s, trimmed.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// Env is what detection looks at.
type Env struct {
	Getenv   func(string) string
	LookPath func(string) (string, error)
}

// Detect picks the backend for mode. In ModeAuto: iTerm2 when running
// inside iTerm2 with the it2 command, else tmux when running inside tmux,
// else in-process. An explicit pane mode must be usable: ModeITerm2 needs
// iTerm2 and it2; ModeTmux needs the tmux command (inside tmux it splits
// the leader's window, outside it uses a dedicated session). The returned
// reason says why, for the user.
func Detect(mode string, env Env) (name, reason string, err error) {
	inITerm := env.Getenv("TERM_PROGRAM") == "iTerm.app" || env.Getenv("ITERM_SESSION_ID") != ""
	_, it2Err := env.LookPath("it2")
	inTmux := env.Getenv("TMUX") != ""
	switch mode {
	case "", ModeAuto:
		switch {
		case inITerm && it2Err == nil && !inTmux:
			return ITerm2, "running inside iTerm2 with the it2 command", nil
		case inTmux:
			return Tmux, "running inside tmux", nil
		default:
			return InProcess, "not inside tmux or iTerm2", nil
		}
	case ModeInProcess:
		return InProcess, "--teammate-mode in-process", nil
	case ModeTmux:
		if _, err := env.LookPath("tmux"); err != nil {
			return "", "", fmt.Errorf("%w: teammate mode tmux needs the tmux command on PATH (install it: apt-get install tmux, brew install tmux)", ErrUnavailable)
		}
		if inTmux {
			return Tmux, "--teammate-mode tmux, inside tmux: splitting this window", nil
		}
		return Tmux, "--teammate-mode tmux, outside tmux: a dedicated tmux session", nil
	case ModeITerm2:
		if !inITerm {
			return "", "", fmt.Errorf("%w: teammate mode iterm2 needs to run inside iTerm2 (TERM_PROGRAM=iTerm.app)", ErrUnavailable)
		}
		if it2Err != nil {
			return "", "", fmt.Errorf("%w: teammate mode iterm2 needs the it2 command (uv tool install it2, pipx install it2, or pip install --user it2)", ErrUnavailable)
		}
		return ITerm2, "--teammate-mode iterm2", nil
	default:
		return "", "", fmt.Errorf("teammate mode %q: want auto, tmux, iterm2 or in-process", mode)
	}
}
