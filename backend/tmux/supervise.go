package tmux

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/troupe-dev/troupe/backend"
)

// paneFormat is what the supervisor asks list-panes for, one pane a line.
const paneFormat = "#{pane_id}|#{pane_dead}|#{pane_pid}|#{pane_dead_status}|#{pane_dead_signal}"

// maxUnreaped is how many polls a dead pane may show no exit status before
// the teammate is ended without one.
const maxUnreaped = 10

// paneState is one line of list-panes output.
type paneState struct {
	dead   bool
	pid    int
	status int // exit status of a dead pane, -1 unknown
	signal int // signal that killed a dead pane's process, 0 none
}

// parsePanes parses list-panes -F paneFormat output. It refuses a line
// it cannot read, naming it, rather than guess.
func parsePanes(out string) (map[string]paneState, error) {
	panes := map[string]paneState{}
	for n, line := range strings.Split(out, "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "|")
		if len(f) != 5 {
			return nil, fmt.Errorf("list-panes line %d %q: want 5 fields separated by |", n+1, line)
		}
		if !validPaneID(f[0]) {
			return nil, fmt.Errorf("list-panes line %d %q: pane id %q", n+1, line, f[0])
		}
		var st paneState
		switch f[1] {
		case "0":
		case "1":
			st.dead = true
		default:
			return nil, fmt.Errorf("list-panes line %d %q: pane_dead %q, want 0 or 1", n+1, line, f[1])
		}
		var err error
		if st.pid, err = strconv.Atoi(f[2]); err != nil || st.pid < 0 {
			return nil, fmt.Errorf("list-panes line %d %q: pane_pid %q", n+1, line, f[2])
		}
		st.status = -1
		if f[3] != "" {
			if st.status, err = strconv.Atoi(f[3]); err != nil || st.status < 0 {
				return nil, fmt.Errorf("list-panes line %d %q: pane_dead_status %q", n+1, line, f[3])
			}
		}
		if f[4] != "" {
			if st.signal, err = strconv.Atoi(f[4]); err != nil || st.signal < 0 {
				return nil, fmt.Errorf("list-panes line %d %q: pane_dead_signal %q", n+1, line, f[4])
			}
		}
		panes[f[0]] = st
	}
	return panes, nil
}

// exitErr is Err for a pane whose process ended on its own.
func exitErr(pane string, st paneState) error {
	switch {
	case st.signal != 0:
		return &backend.ExitError{Signal: st.signal}
	case st.status == 0:
		return nil
	case st.status > 0:
		return &backend.ExitError{Status: st.status}
	default:
		return fmt.Errorf("pane %s died with no exit status: %w", pane, backend.ErrPaneGone)
	}
}

// check lists the server's panes once and ends every teammate whose pane
// is dead (reading its exit status, then killing the dead pane) or gone.
// Panes troupe is killing itself have left the owned list and are
// skipped.
func (b *Backend) check(ctx context.Context) {
	// Only teammates registered before the listing starts are judged by
	// it: a pane created meanwhile may be missing from it.
	watched := b.panes.Watched()
	if len(watched) == 0 {
		return
	}
	out, err := b.run(ctx, "list-panes", "-a", "-F", paneFormat)
	var panes map[string]paneState
	switch {
	case serverGone(err):
		panes = map[string]paneState{}
	case err != nil:
		return // a failed poll is retried at the next tick
	default:
		if panes, err = parsePanes(out); err != nil {
			return
		}
	}
	type ending struct {
		pane string
		err  error
		dead bool
	}
	var ends []ending
	nudge := false
	// Judge skips teammates that ended, or whose pane troupe is killing.
	b.panes.Judge(watched, func(p string, h *Handle) {
		st, ok := panes[p]
		switch {
		case !ok:
			ends = append(ends, ending{pane: p, err: fmt.Errorf("pane %s: %w", p, backend.ErrPaneGone)})
		case st.dead && st.status < 0 && st.signal == 0 && h.unreaped < maxUnreaped:
			// tmux marks a pane dead when its terminal closes and
			// learns the status when it reaps the process. tmux 3.3a
			// sometimes misses that SIGCHLD and leaves a zombie
			// (seen 2-3 times in 10 runs of TestExitStatus...): make
			// it reap (run-shell forks a child, whose exit makes tmux
			// wait for all of them) and look again at the next poll.
			h.unreaped++
			nudge = true
		case st.dead:
			ends = append(ends, ending{pane: p, err: exitErr(p, st), dead: true})
		}
	})
	if nudge {
		_, _ = b.run(ctx, "run-shell", "true")
	}
	for _, e := range ends {
		if ee, ok := e.err.(*backend.ExitError); ok {
			ee.Output = b.tail(ctx, e.pane)
		}
		if e.dead {
			// The status is read; a dead pane that cannot be killed now
			// stays owned, and Close kills it.
			_ = b.killPane(ctx, e.pane)
		} else {
			b.panes.Disown(e.pane)
		}
		b.finishPane(e.pane, e.err)
	}
}

// Limits of what tail keeps of a failed pane.
const (
	tailLines = 20
	tailBytes = 4096
)

// tail returns the last lines a dead pane showed, without tmux's own
// "Pane is dead" line, or "" when they cannot be read. It is best effort:
// when the process exits right after writing, tmux 3.3a may close the pane
// before it has drawn the last output.
func (b *Backend) tail(ctx context.Context, p string) string {
	out, err := b.run(ctx, "capture-pane", "-p", "-J", "-t", p, "-S", "-"+strconv.Itoa(4*tailLines))
	if err != nil {
		return ""
	}
	return tailOf(out)
}

// tailOf keeps the last tailLines non-trailing-blank lines of a pane
// capture (at most tailBytes), dropping tmux's "Pane is dead" line.
func tailOf(capture string) string {
	var lines []string
	for line := range strings.SplitSeq(capture, "\n") {
		if strings.HasPrefix(line, "Pane is dead") {
			continue
		}
		lines = append(lines, strings.TrimRight(line, " "))
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	s := strings.Join(lines, "\n")
	if len(s) > tailBytes {
		s = s[len(s)-tailBytes:]
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
	}
	return s
}
