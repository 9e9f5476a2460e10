package tmux

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/internal/paneenv"
)

var _ backend.Backend = (*Backend)(nil)

// Defaults of Config.
const (
	DefaultSession      = "troupe-swarm"
	DefaultWindow       = "swarm-view"
	DefaultPollInterval = 500 * time.Millisecond
	DefaultWidth        = 200 // of the dedicated session, until a client attaches
	DefaultHeight       = 60
)

// createTimeout bounds a pane-creating tmux command, which runs to its
// end even when the Spawn's ctx is cancelled.
const createTimeout = 30 * time.Second

// Config says which tmux server to use and how.
type Config struct {
	// Socket is the -L name of the dedicated server used outside tmux.
	// Default "troupe-swarm-<pid>". Tests pass a private name.
	Socket string
	// Session and Window name the dedicated session and its window.
	// Default DefaultSession and DefaultWindow.
	Session, Window string
	// Width and Height size the dedicated session's window until a client
	// attaches. Default DefaultWidth x DefaultHeight.
	Width, Height int
	// Getenv reads the leader's environment: $TMUX and $TMUX_PANE say
	// whether it runs inside tmux. Default os.Getenv.
	Getenv func(string) string
	// TmuxPath is the tmux command, looked up on PATH when it has no
	// slash. Default "tmux".
	TmuxPath string
	// PollInterval is how often the supervisor lists panes to notice a
	// teammate's death. Default DefaultPollInterval.
	PollInterval time.Duration
}

// Backend starts teammates in tmux panes. It is safe for concurrent use.
type Backend struct {
	tmuxPath string
	sockArgs []string // -S path or -L name
	inside   bool     // splitting the leader's window
	leader   string   // leader pane id, inside only
	session  string   // dedicated session, outside only
	window   string
	width    int
	height   int
	poll     time.Duration

	ctx    context.Context // lifecycle; ended by Close
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup // the supervisor
	kick   chan struct{}  // 1-slot: poll now

	// layout serialises the pane-creating and re-tiling commands, which
	// read and change the whole window. It guards nothing in memory.
	layout chan struct{}

	panes backend.Panes[Handle] // by pane id
	envs  paneenv.Dir           // the teammates' environment files

	mu            sync.Mutex
	windows       map[string]string // pane -> window name of teammates in a window of their own (Spec.Window, Hide); guarded by mu
	startedServer bool              // troupe started the dedicated server; guarded by mu
	socketPath    string            // of the server troupe started; guarded by mu
}

// New returns a tmux backend. Inside tmux ($TMUX set) it splits the
// leader's window ($TMUX_PANE) on the leader's server; outside it uses a
// dedicated server and session, started on the first Spawn. It fails with
// backend.ErrUnavailable when the tmux command is not found, and with a
// plain error for a malformed $TMUX or $TMUX_PANE.
func New(cfg Config) (*Backend, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	name := cfg.TmuxPath
	if name == "" {
		name = "tmux"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%w: tmux command %q: %v (install it: apt-get install tmux, brew install tmux)", backend.ErrUnavailable, name, err)
	}
	b := &Backend{
		tmuxPath: path,
		session:  orDefault(cfg.Session, DefaultSession),
		window:   orDefault(cfg.Window, DefaultWindow),
		width:    cfg.Width,
		height:   cfg.Height,
		poll:     cfg.PollInterval,
		kick:     make(chan struct{}, 1),
		layout:   make(chan struct{}, 1),
	}
	if b.width <= 0 {
		b.width = DefaultWidth
	}
	if b.height <= 0 {
		b.height = DefaultHeight
	}
	if b.poll <= 0 {
		b.poll = DefaultPollInterval
	}
	for _, name := range []string{b.session, b.window} {
		if err := checkName(name); err != nil {
			return nil, err
		}
	}
	if env := getenv("TMUX"); env != "" {
		sock, err := leaderSocket(env)
		if err != nil {
			return nil, err
		}
		b.leader = getenv("TMUX_PANE")
		if !validPaneID(b.leader) {
			return nil, fmt.Errorf("inside tmux, $TMUX_PANE %q: want the leader's pane id like %%3", b.leader)
		}
		// A $TMUX left behind (the server gone, the variable copied into
		// another shell) names a socket that is not there: say so now,
		// not at the first split.
		if fi, err := os.Stat(sock); err != nil || fi.Mode()&os.ModeSocket == 0 {
			why := "not a socket"
			if err != nil {
				why = err.Error()
			}
			return nil, fmt.Errorf("%w: $TMUX names the tmux server socket %s, which is not there (%s): is the tmux server this shell ran in gone?", backend.ErrUnavailable, sock, why)
		}
		b.inside = true
		b.sockArgs = []string{"-S", sock}
	} else {
		sock := cfg.Socket
		if sock == "" {
			sock = "troupe-swarm-" + strconv.Itoa(os.Getpid())
		}
		if err := checkName(sock); err != nil {
			return nil, fmt.Errorf("socket: %w", err)
		}
		b.sockArgs = []string{"-L", sock}
	}
	b.ctx, b.cancel = context.WithCancelCause(context.Background())
	b.wg.Go(func() { backend.Supervise(b.ctx, b.poll, b.kick, b.check) })
	return b, nil
}

// checkName refuses a session, window or socket name tmux would misread.
func checkName(s string) error {
	if s == "" || strings.ContainsAny(s, ":.;#%/ ") {
		return fmt.Errorf("tmux name %q: want a non-empty name without : . ; # %% / or spaces", s)
	}
	return backend.CheckText("tmux name", s)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Name returns backend.Tmux.
func (b *Backend) Name() string { return backend.Tmux }

// Inside reports whether the backend splits the leader's window (the
// leader runs inside tmux) rather than a dedicated session.
func (b *Backend) Inside() bool { return b.inside }

// SocketArgs returns the tmux flags that reach the backend's server
// (-S path inside tmux, -L name outside), for a user to attach or a test
// to inspect.
func (b *Backend) SocketArgs() []string { return append([]string(nil), b.sockArgs...) }

// AttachCommand returns the shell command a user runs to watch the
// teammates of the dedicated session ("tmux -L troupe-swarm-123 attach -t
// troupe-swarm"), or "" inside tmux, where they are in the leader's window.
func (b *Backend) AttachCommand() string {
	if b.inside {
		return ""
	}
	words := append(b.SocketArgs(), "attach", "-t", b.session)
	for i, w := range words {
		if strings.ContainsFunc(w, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-+=@,", r))
		}) {
			words[i], _ = backend.ShellQuote(w) // names passed checkName: no control characters
		}
	}
	return "tmux " + strings.Join(words, " ")
}

// tmuxError is a failed tmux command with what it printed.
type tmuxError struct {
	args   []string
	stderr string
	err    error
}

func (e *tmuxError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	return fmt.Sprintf("tmux %s: %s", e.args[0], msg)
}

func (e *tmuxError) Unwrap() error { return e.err }

// serverGone reports whether err says the server does not run.
func serverGone(err error) bool {
	var te *tmuxError
	if !errors.As(err, &te) {
		return false
	}
	return strings.Contains(te.stderr, "no server running") ||
		strings.Contains(te.stderr, "error connecting to") ||
		strings.Contains(te.stderr, "server exited")
}

// noSessions reports whether err says the server has no session left.
func noSessions(err error) bool {
	var te *tmuxError
	return errors.As(err, &te) && strings.Contains(te.stderr, "no current target")
}

// paneMissing reports whether err says a target pane does not exist.
func paneMissing(err error) bool {
	var te *tmuxError
	return errors.As(err, &te) && (strings.Contains(te.stderr, "can't find pane") || serverGone(err))
}

// run runs one tmux command line on the backend's server and returns its
// standard output.
func (b *Backend) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, b.tmuxPath, append(b.SocketArgs(), args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("tmux %s: %w", args[0], context.Cause(ctx))
		}
		return "", &tmuxError{args: args, stderr: stderr.String(), err: err}
	}
	return stdout.String(), nil
}

// killPane kills pane p if troupe created it, and forgets it. A pane
// that is already gone is not an error. The pane leaves the owned list
// before tmux is asked, so the supervisor never mistakes troupe's own kill
// for a pane closed by someone else.
func (b *Backend) killPane(ctx context.Context, p string) error {
	if !b.panes.Disown(p) {
		return nil // never ours, or already killed
	}
	b.mu.Lock()
	delete(b.windows, p)
	b.mu.Unlock()
	if _, err := b.run(ctx, "kill-pane", "-t", p); err != nil && !paneMissing(err) {
		b.panes.Own(p)
		return fmt.Errorf("kill pane %s: %w", p, err)
	}
	return nil
}

// Close kills every pane troupe created (only those) and waits for
// Spawns under way, or for ctx. When troupe started the dedicated server
// and no pane is left on it, it kills the server. Close is idempotent;
// Spawn fails with backend.ErrClosed after it.
func (b *Backend) Close(ctx context.Context) error {
	panes, err := b.panes.Close(ctx)
	if err != nil {
		return fmt.Errorf("close tmux backend: spawns under way: %w", err)
	}
	var errs []error
	for _, p := range panes {
		if err := b.killPane(ctx, p); err != nil {
			errs = append(errs, err)
			continue
		}
		b.finishPane(p, backend.ErrKilled)
	}
	b.cancel(backend.ErrClosed)
	b.wg.Wait()
	if err := b.envs.Close(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close tmux backend: %w", err)
	}

	b.mu.Lock()
	started, sock := b.startedServer, b.socketPath
	b.startedServer = false
	b.mu.Unlock()
	if !started {
		return nil
	}
	out, err := b.run(ctx, "list-panes", "-a", "-F", "#{pane_id}")
	switch {
	case serverGone(err):
	case noSessions(err):
		// The last session is gone and the server is on its way out.
		if _, err := b.run(ctx, "kill-server"); err != nil && !serverGone(err) {
			return fmt.Errorf("close tmux backend: %w", err)
		}
	case err != nil:
		return fmt.Errorf("close tmux backend: list panes: %w", err)
	case strings.TrimSpace(out) != "":
		return nil // someone else's panes: leave the server running
	default:
		if _, err := b.run(ctx, "kill-server"); err != nil && !serverGone(err) {
			return fmt.Errorf("close tmux backend: %w", err)
		}
	}
	// tmux leaves its socket file behind.
	if sock != "" {
		if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("close tmux backend: %w", err)
		}
	}
	return nil
}

// finishPane ends the teammate of pane p, if any, with err.
func (b *Backend) finishPane(p string, err error) {
	if h := b.panes.Finish(p); h != nil {
		h.end.Finish(err)
	}
}
