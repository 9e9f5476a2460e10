package tmux

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/backend"
)

// Spawn creates a pane, titles and colours it, and starts s.Argv in it
// with s.Env and s.Cwd. It returns once the teammate's process runs. It
// fails with backend.ErrRunning when s.AgentID still runs,
// backend.ErrClosed after Close, and a plain error naming the problem for
// a bad spec (no AgentID, no Argv, a relative Cwd, an unknown colour, a
// control character anywhere) or a tmux failure (no room for a pane).
func (b *Backend) Spawn(ctx context.Context, s backend.Spec) (backend.Handle, error) {
	if s.AgentID == "" {
		return nil, errors.New("spawn tmux teammate: spec has no AgentID")
	}
	fail := func(err error) (backend.Handle, error) {
		return nil, fmt.Errorf("spawn tmux teammate %s: %w", s.AgentID, err)
	}
	if _, err := backend.PaneCommand(s.Cwd, "", s.Argv); err != nil {
		return fail(err)
	}
	if _, err := backend.EnvFile(s.Env); err != nil {
		return fail(err)
	}
	colour, err := tmuxColour(s.Color)
	if err != nil {
		return fail(err)
	}
	title := s.Name
	if title == "" {
		title = s.AgentID
	}
	if err := backend.CheckText("name", title); err != nil {
		return fail(err)
	}
	if err := ctx.Err(); err != nil {
		return fail(context.Cause(ctx))
	}

	h := &Handle{b: b, agentID: s.AgentID}
	if err := b.panes.Reserve(s.AgentID, h); err != nil {
		return fail(err)
	}

	// The variables go through a file the pane's shell reads and
	// removes, never on tmux's or the shell's command line.
	envFile, err := b.envs.Write(s.Env)
	var command string
	if err == nil {
		command, err = backend.PaneCommand(s.Cwd, envFile, s.Argv)
	}
	var pane string
	if err == nil {
		if s.Window {
			pane, err = b.newWindow(ctx, title)
			h.window = windowName(title)
		} else {
			pane, err = b.newPane(ctx)
		}
	}
	if err == nil {
		h.pane = pane
		var out string
		out, err = b.run(ctx, chain(append(styleArgs(pane, title, colour), launchArgs(pane, command)...)...)...)
		if err == nil {
			h.pid, err = strconv.Atoi(strings.TrimSpace(out))
			if err != nil {
				err = fmt.Errorf("tmux printed pane pid %q: %w", out, err)
			}
		}
		if err != nil {
			b.killPane(context.WithoutCancel(ctx), pane)
		}
	}
	if err != nil {
		b.envs.Remove(envFile)
	}
	// After Close, Close has killed or will kill the pane.
	if err := b.panes.Launched(s.AgentID, pane, h, err); err != nil {
		return fail(err)
	}
	backend.Kick(b.kick)
	return h, nil
}

// newPane creates an empty pane (running the placeholder) for one more
// teammate, records it as troupe's, and re-tiles the window.
func (b *Backend) newPane(ctx context.Context) (string, error) {
	select {
	case b.layout <- struct{}{}:
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
	defer func() { <-b.layout }()

	teammates := b.split()

	var window, pane string
	if b.inside {
		out, err := b.run(ctx, "display-message", "-p", "-t", b.leader, "#{window_id}")
		if err != nil {
			return "", fmt.Errorf("find the leader's window: %w", err)
		}
		window = strings.TrimSpace(out)
	} else {
		window = "=" + b.session + ":" + b.window
		if len(teammates) == 0 {
			p, created, err := b.ensureSession(ctx)
			if err != nil {
				return "", err
			}
			if created {
				pane = p
			} else if pane, err = b.sharedWindow(ctx); err != nil {
				return "", err
			}
		}
	}
	if pane == "" {
		// A split that tmux made must not be lost to a cancelled ctx
		// (the pane would be nobody's): it runs to its end.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
		out, err := b.run(cctx, splitArgs(b.inside, b.leader, window, teammates)...)
		cancel()
		if err != nil {
			return "", fmt.Errorf("create a pane: %w", err)
		}
		pane = strings.TrimSpace(out)
	}
	if !validPaneID(pane) {
		return "", fmt.Errorf("tmux printed pane id %q; want %%<number>", pane)
	}
	b.panes.Own(pane)

	panes := len(teammates) + 1
	if b.inside {
		panes++ // the leader
	}
	if _, err := b.run(ctx, chain(relayoutArgs(b.inside, window, b.leader, panes)...)...); err != nil {
		b.killPane(context.WithoutCancel(ctx), pane)
		return "", fmt.Errorf("re-tile window %s: %w", window, err)
	}
	return pane, nil
}

// ensureSession makes sure the dedicated session exists. When it creates
// it, it returns its first pane (which the first teammate reuses) and
// created true. A server that exits while it is asked (its last pane just
// closed) is retried a few times.
func (b *Backend) ensureSession(ctx context.Context) (pane string, created bool, err error) {
	for attempt := 1; ; attempt++ {
		pane, created, err = b.tryEnsureSession(ctx)
		if err == nil || !serverGone(err) || attempt == 5 {
			return pane, created, err
		}
		select {
		case <-time.After(time.Duration(attempt) * 20 * time.Millisecond):
		case <-ctx.Done():
			return "", false, context.Cause(ctx)
		}
	}
}

func (b *Backend) tryEnsureSession(ctx context.Context) (pane string, created bool, err error) {
	out, err := b.run(ctx, "list-sessions", "-F", "#{session_name}")
	serverUp := err == nil
	if err != nil && !serverGone(err) {
		return "", false, fmt.Errorf("list sessions: %w", err)
	}
	for _, name := range strings.Split(out, "\n") {
		if name == b.session {
			return "", false, nil
		}
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout) // see newPane
	defer cancel()
	out, err = b.run(cctx, chain(
		append([]string{"new-session", "-d", "-s", b.session, "-n", b.window,
			"-x", strconv.Itoa(b.width), "-y", strconv.Itoa(b.height), "-P", "-F", paneIDFormat, "--"}, placeholder...),
		[]string{"display-message", "-p", "#{socket_path}"})...)
	if err != nil {
		return "", false, fmt.Errorf("start the dedicated session: %w", err)
	}
	pane, sock, _ := strings.Cut(strings.TrimSpace(out), "\n")
	if !serverUp {
		b.mu.Lock()
		b.startedServer = true
		b.socketPath = sock
		b.mu.Unlock()
	}
	return pane, true, nil
}

// newWindow creates an empty pane (running the placeholder) in a window of
// its own, named after title, for a teammate that asked for one
// (backend.Spec.Window), and records it as troupe's. Inside tmux the window
// is made in the leader's session; outside, in the dedicated session (whose
// first pane, when the session is new, becomes the window).
func (b *Backend) newWindow(ctx context.Context, title string) (string, error) {
	select {
	case b.layout <- struct{}{}:
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
	defer func() { <-b.layout }()

	name := windowName(title)
	var target string
	if b.inside {
		out, err := b.run(ctx, "display-message", "-p", "-t", b.leader, "#{session_id}")
		if err != nil {
			return "", fmt.Errorf("find the leader's session: %w", err)
		}
		target = strings.TrimSpace(out) + ":"
	} else {
		p, created, err := b.ensureSession(ctx)
		if err != nil {
			return "", err
		}
		if created {
			// The new session's only window becomes the teammate's; a
			// split teammate later makes the shared window again
			// (sharedWindow).
			if _, err := b.run(ctx, "rename-window", "-t", p, name); err != nil {
				b.run(context.WithoutCancel(ctx), "kill-pane", "-t", p)
				return "", fmt.Errorf("name the teammate's window: %w", err)
			}
			b.own(p, name)
			return p, nil
		}
		target = "=" + b.session + ":"
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout) // see newPane
	out, err := b.run(cctx, append([]string{"new-window", "-d", "-t", target, "-n", name, "-P", "-F", paneIDFormat, "--"}, placeholder...)...)
	cancel()
	if err != nil {
		return "", fmt.Errorf("create a window: %w", err)
	}
	pane := strings.TrimSpace(out)
	if !validPaneID(pane) {
		return "", fmt.Errorf("tmux printed pane id %q; want %%<number>", pane)
	}
	b.own(pane, name)
	return pane, nil
}

// sharedWindow returns "" when the dedicated session's shared window is
// there to be split, or else a new pane that makes it again (its window was
// closed with its last split teammate while a teammate in a window of its
// own kept the session up).
func (b *Backend) sharedWindow(ctx context.Context) (string, error) {
	out, err := b.run(ctx, "list-windows", "-t", "="+b.session, "-F", "#{window_name}")
	if err != nil {
		return "", fmt.Errorf("list the windows of session %s: %w", b.session, err)
	}
	for _, name := range strings.Split(strings.TrimSpace(out), "\n") {
		if name == b.window {
			return "", nil
		}
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout) // see newPane
	defer cancel()
	out, err = b.run(cctx, append([]string{"new-window", "-d", "-t", "=" + b.session + ":", "-n", b.window, "-P", "-F", paneIDFormat, "--"}, placeholder...)...)
	if err != nil {
		return "", fmt.Errorf("make the shared window %s again: %w", b.window, err)
	}
	return strings.TrimSpace(out), nil
}

// windowName is the name of a teammate's own window: "teammate-<title>",
// with every character tmux would read as a target separator or format
// replaced by '-'.
func windowName(title string) string {
	var sb strings.Builder
	sb.WriteString("teammate-")
	for _, r := range title {
		if r > ' ' && r < 0x7f && !strings.ContainsRune(":.;#%/'\"$`", r) {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('-')
		}
	}
	return sb.String()
}
