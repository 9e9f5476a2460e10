// Package iterm2 runs teammates in iTerm2 split panes through the it2
// command-line tool (uv tool install it2, pipx install it2, or pip install
// --user it2).
//
// These are the only it2 commands it issues:
//
//	it2 session split -v -s <leader>      the first teammate; the leader session is the
//	                                      part of $ITERM_SESSION_ID after ':' (plain
//	                                      "it2 session split -v" without it)
//	it2 session split -s <last teammate>  later teammates, stacked under the last one
//	it2 session send -s <id> <Ctrl-U>     clear whatever the new session's shell line holds
//	it2 session run -s <id> '<command>'   the command line of backend.PaneCommand; the
//	                                      teammate's variables are in a 0600 file it
//	                                      reads and removes (package paneenv), not on
//	                                      the line the shell shows and keeps in history
//	it2 session list                      liveness, and before pruning a dead split target
//	it2 session close -f -s <id>          Kill and Close, only sessions troupe created
//
// The new session's id is read from the split's "Created new pane: <id>"
// line. When a split of a teammate session fails and that session is no
// longer listed, the teammate is ended (backend.ErrPaneGone) and the split
// retried on the previous teammate, then the leader.
//
// The command line starts the teammate with exec, so it replaces the
// session's shell and the session closes when the teammate exits. It is
// typed into that shell (the user's login shell): zsh, bash and other
// POSIX shells read its quoting exactly; fish reads a doubled backslash
// inside quotes as one, so an argument holding "\\" reaches a fish user's
// teammate changed (Claude Code has the same limit).
// Liveness: one supervisor goroutine lists sessions every
// Config.PollInterval while there are teammates; a teammate whose session
// is no longer listed has ended. iTerm2 does not report exit statuses, so
// Handle.Err is backend.ErrPaneGone for any end that was not Kill or Close
// (backend.ErrKilled).
//
// Spec.Name and Spec.Color are not shown: Claude Code's own iTerm2 panes
// get no session title or colour either, and the teammate's own UI shows both.
//
// A Backend is safe for concurrent use. Splits are serialised; Spawn is
// idempotent by AgentID (backend.ErrRunning).
package iterm2

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/internal/paneenv"
)

var _ backend.Backend = (*Backend)(nil)

// DefaultPollInterval is how often the supervisor lists sessions.
const DefaultPollInterval = 500 * time.Millisecond

// createTimeout bounds a split, which runs to its end even when the
// Spawn's ctx is cancelled.
const createTimeout = 30 * time.Second

// ctrlU is the key that clears the shell's input line.
const ctrlU = "\x15"

// Config says which it2 to run and where the leader is.
type Config struct {
	// It2Path is the it2 command, looked up on PATH when it has no slash.
	// Default "it2".
	It2Path string
	// Getenv reads the leader's environment ($ITERM_SESSION_ID). Default
	// os.Getenv.
	Getenv func(string) string
	// PollInterval is how often the supervisor lists sessions to notice a
	// teammate's end. Default DefaultPollInterval.
	PollInterval time.Duration
}

// Backend starts teammates in iTerm2 sessions. It is safe for concurrent
// use.
type Backend struct {
	it2    string
	leader string // leader session id, or ""
	poll   time.Duration

	ctx    context.Context // lifecycle; ended by Close
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup // the supervisor
	kick   chan struct{}  // 1-slot: poll now

	// split serialises splits, which depend on the last teammate. It
	// guards nothing in memory.
	split chan struct{}

	sessions backend.Panes[Handle] // by session id
	envs     paneenv.Dir           // the teammates' environment files
}

// New returns an iTerm2 backend. It fails with backend.ErrUnavailable
// when the it2 command is not found.
func New(cfg Config) (*Backend, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	name := cfg.It2Path
	if name == "" {
		name = "it2"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%w: it2 command %q: %v (install it: uv tool install it2, pipx install it2, or pip install --user it2)",
			backend.ErrUnavailable, name, err)
	}
	b := &Backend{
		it2:   path,
		poll:  cfg.PollInterval,
		kick:  make(chan struct{}, 1),
		split: make(chan struct{}, 1),
	}
	if b.poll <= 0 {
		b.poll = DefaultPollInterval
	}
	if _, id, ok := strings.Cut(getenv("ITERM_SESSION_ID"), ":"); ok && id != "" {
		if !validSessionID(id) {
			return nil, fmt.Errorf("$ITERM_SESSION_ID session %q: want an id without spaces or control characters", id)
		}
		b.leader = id
	}
	b.ctx, b.cancel = context.WithCancelCause(context.Background())
	b.wg.Go(func() { backend.Supervise(b.ctx, b.poll, b.kick, b.check) })
	return b, nil
}

// Name returns backend.ITerm2.
func (b *Backend) Name() string { return backend.ITerm2 }

// validSessionID reports whether id can be an iTerm2 session id.
func validSessionID(id string) bool {
	return id != "" && !strings.HasPrefix(id, "-") && strings.IndexFunc(id, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}) < 0
}

// it2Error is a failed it2 command with what it printed.
type it2Error struct {
	args   []string
	output string
	err    error
}

func (e *it2Error) Error() string {
	msg := strings.TrimSpace(e.output)
	if msg == "" {
		msg = e.err.Error()
	}
	return fmt.Sprintf("it2 %s: %s", strings.Join(e.args[:min(2, len(e.args))], " "), msg)
}

func (e *it2Error) Unwrap() error { return e.err }

// run runs it2 with args and returns its standard output.
func (b *Backend) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, b.it2, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("it2 %s: %w", strings.Join(args[:min(2, len(args))], " "), context.Cause(ctx))
		}
		return "", &it2Error{args: args, output: stderr.String() + stdout.String(), err: err}
	}
	return stdout.String(), nil
}

// parseCreated reads the session id from a split's output.
func parseCreated(out string) (string, error) {
	const label = "Created new pane:"
	for line := range strings.SplitSeq(out, "\n") {
		_, id, ok := strings.Cut(line, label)
		if !ok {
			continue
		}
		id = strings.TrimSpace(id)
		if !validSessionID(id) {
			return "", fmt.Errorf("it2 split printed %q: bad session id %q", out, id)
		}
		return id, nil
	}
	return "", fmt.Errorf("it2 split printed %q: want a line %q", out, label+" <id>")
}

// parseList returns every word of it2 session list output that could be
// a session id. The listing's layout is not a stable contract, so a
// session counts as listed when its id appears as a whole word, split at
// spaces and the punctuation around ids (":" separates the wXtYpZ prefix).
func parseList(out string) map[string]bool {
	ids := map[string]bool{}
	for _, w := range strings.FieldsFunc(out, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune(":,;|()[]{}<>\"'=", r)
	}) {
		ids[w] = true
	}
	return ids
}

// list returns the ids it2 lists.
func (b *Backend) list(ctx context.Context) (map[string]bool, error) {
	out, err := b.run(ctx, "session", "list")
	if err != nil {
		return nil, err
	}
	return parseList(out), nil
}

// Spawn splits a new session, clears its line and runs the teammate's
// command line in it. It fails with backend.ErrRunning when s.AgentID
// still runs, backend.ErrClosed after Close, and a plain error naming the
// problem for a bad spec or an it2 failure.
func (b *Backend) Spawn(ctx context.Context, s backend.Spec) (backend.Handle, error) {
	if s.AgentID == "" {
		return nil, errors.New("spawn iTerm2 teammate: spec has no AgentID")
	}
	fail := func(err error) (backend.Handle, error) {
		return nil, fmt.Errorf("spawn iTerm2 teammate %s: %w", s.AgentID, err)
	}
	if _, err := backend.PaneCommand(s.Cwd, "", s.Argv); err != nil {
		return fail(err)
	}
	if _, err := backend.EnvFile(s.Env); err != nil {
		return fail(err)
	}
	if err := ctx.Err(); err != nil {
		return fail(context.Cause(ctx))
	}
	h := &Handle{b: b, agentID: s.AgentID}
	if err := b.sessions.Reserve(s.AgentID, h); err != nil {
		return fail(err)
	}
	// The variables go through a file the session's shell reads and
	// removes: a line typed into a shell is on its command line and in
	// its history.
	envFile, err := b.envs.Write(s.Env)
	var command, id string
	if err == nil {
		command, err = backend.PaneCommand(s.Cwd, envFile, s.Argv)
	}
	if err == nil {
		id, err = b.newSession(ctx)
	}
	if err == nil {
		h.session = id
		if _, err = b.run(ctx, "session", "send", "-s", id, ctrlU); err == nil {
			_, err = b.run(ctx, "session", "run", "-s", id, command)
		}
		if err != nil {
			b.closeSession(context.WithoutCancel(ctx), id)
		}
	}
	if err != nil {
		b.envs.Remove(envFile)
	}
	// After Close, Close has closed or will close the session.
	if err := b.sessions.Launched(s.AgentID, id, h, err); err != nil {
		return fail(err)
	}
	backend.Kick(b.kick)
	return h, nil
}

// newSession splits a session for one more teammate: the leader's for
// the first, the last teammate's after. A teammate target that fails and
// is no longer listed is pruned (its teammate ends) and the split retried
// on the one before.
func (b *Backend) newSession(ctx context.Context) (string, error) {
	select {
	case b.split <- struct{}{}:
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
	defer func() { <-b.split }()
	for {
		target := ""
		if owned := b.sessions.Owned(); len(owned) > 0 {
			target = owned[len(owned)-1]
		}

		var args []string
		switch {
		case target != "":
			args = []string{"session", "split", "-s", target}
		case b.leader != "":
			args = []string{"session", "split", "-v", "-s", b.leader}
		default:
			args = []string{"session", "split", "-v"}
		}
		// A split that iTerm2 made must not be lost to a cancelled ctx
		// (the session would be nobody's): it runs to its end.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
		out, err := b.run(cctx, args...)
		cancel()
		if err == nil {
			id, err := parseCreated(out)
			if err != nil {
				return "", err
			}
			b.sessions.Own(id)
			return id, nil
		}
		if target == "" {
			return "", fmt.Errorf("split a session: %w", err)
		}
		listed, lerr := b.list(ctx)
		if lerr != nil {
			return "", fmt.Errorf("split a session: %w (and listing sessions: %v)", err, lerr)
		}
		if listed[target] {
			return "", fmt.Errorf("split a session: %w", err)
		}
		b.gone(target)
	}
}

// gone ends the teammate of a session that is no longer listed.
func (b *Backend) gone(id string) {
	b.sessions.Disown(id)
	b.finishSession(id, fmt.Errorf("iTerm2 session %s: %w", id, backend.ErrPaneGone))
}

// closeSession closes session id if troupe created it, and forgets it. A
// session that is already gone is not an error. The session leaves the
// owned list before it2 is asked, so the supervisor never mistakes
// troupe's own close for someone else's.
func (b *Backend) closeSession(ctx context.Context, id string) error {
	if !b.sessions.Disown(id) {
		return nil // never ours, or already closed
	}
	_, err := b.run(ctx, "session", "close", "-f", "-s", id)
	if err == nil {
		return nil
	}
	if listed, lerr := b.list(ctx); lerr == nil && !listed[id] {
		return nil
	}
	b.sessions.Own(id)
	return fmt.Errorf("close iTerm2 session %s: %w", id, err)
}

// finishSession ends the teammate of session id, if any, with err.
func (b *Backend) finishSession(id string, err error) {
	if h := b.sessions.Finish(id); h != nil {
		h.end.Finish(err)
	}
}

// Close closes every session troupe created (only those) and waits for
// Spawns under way, or for ctx. It is idempotent; Spawn fails with
// backend.ErrClosed after it.
func (b *Backend) Close(ctx context.Context) error {
	ids, err := b.sessions.Close(ctx)
	if err != nil {
		return fmt.Errorf("close iTerm2 backend: spawns under way: %w", err)
	}
	var errs []error
	for _, id := range ids {
		if err := b.closeSession(ctx, id); err != nil {
			errs = append(errs, err)
			continue
		}
		b.finishSession(id, backend.ErrKilled)
	}
	b.cancel(backend.ErrClosed)
	b.wg.Wait()
	if err := b.envs.Close(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close iTerm2 backend: %w", err)
	}
	return nil
}

// check ends every teammate whose session is no longer listed. A failed
// listing is retried at the next tick: it says nothing about the
// sessions.
func (b *Backend) check(ctx context.Context) {
	// Only teammates registered before the listing starts are judged by
	// it: a session created meanwhile may be missing from it.
	watched := b.sessions.Watched()
	if len(watched) == 0 {
		return
	}
	listed, err := b.list(ctx)
	if err != nil {
		return
	}
	var gone []string
	b.sessions.Judge(watched, func(id string, _ *Handle) {
		if !listed[id] {
			gone = append(gone, id)
		}
	})
	for _, id := range gone {
		b.gone(id)
	}
}
