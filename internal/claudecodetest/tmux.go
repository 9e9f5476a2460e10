package claudecodetest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Tmux is a private tmux server (its socket in a test folder, no config
// file) whose first pane runs an interactive claude. Claude Code's team
// lead needs an interactive session: in -p mode it makes no team
// (docs/protocol.md section 14), and it starts pane teammates inside the tmux it
// runs in (section 10.5).
type Tmux struct {
	Socket string // the -S path
	Target string // the lead's pane: "<session>:0.0"
	env    []string
}

// StartTmux starts a tmux server with s's environment and runs
// `claude args...` in dir in its first pane (220x50). dir is marked
// trusted first, so no dialog stops the session. The server is killed when
// the test ends. It skips the test when tmux is not installed.
func (s *Session) StartTmux(t testing.TB, dir string, args ...string) *Tmux {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("claudecodetest: tmux is not on PATH")
	}
	if err := s.Trust(dir); err != nil {
		t.Fatal(err)
	}
	x := &Tmux{
		Socket: filepath.Join(t.TempDir(), "tmux"),
		Target: "lead:0.0",
		env:    s.Environ(),
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := x.Close(ctx); err != nil {
			t.Errorf("claudecodetest: %v", err)
		}
	})
	cmd := append([]string{"new-session", "-d", "-s", "lead", "-x", "220", "-y", "50", "-c", dir, s.Bin}, args...)
	if out, err := x.Run(t.Context(), cmd...); err != nil {
		t.Fatalf("claudecodetest: tmux new-session: %v: %s", err, out)
	}
	return x
}

// Run runs a tmux command against x's server and returns its combined
// output.
func (x *Tmux) Run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "tmux", append([]string{"-S", x.Socket, "-f", "/dev/null"}, args...)...)
	cmd.Env = x.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Close kills the server and waits for the programs of its panes to exit,
// so that nothing writes into the test's folders once it returns (a
// claude lead removes its team folder as it exits).
func (x *Tmux) Close(ctx context.Context) error {
	out, _ := x.Run(ctx, "list-panes", "-a", "-F", "#{pane_pid}")
	x.Run(ctx, "kill-server")
	for _, f := range strings.Fields(out) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		p, err := os.FindProcess(pid)
		if err != nil {
			continue
		}
		for p.Signal(syscall.Signal(0)) == nil {
			select {
			case <-ctx.Done():
				return fmt.Errorf("pane process %d still running after tmux kill-server: %w", pid, ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

// Screen returns what the lead's pane shows now, for failure messages.
func (x *Tmux) Screen(ctx context.Context) string {
	out, err := x.Run(ctx, "capture-pane", "-p", "-t", x.Target)
	if err != nil {
		return fmt.Sprintf("(capture-pane: %v: %s)", err, strings.TrimSpace(out))
	}
	return out
}

// TeamsDir is the folder Claude Code keeps its teams in for s.
func (s *Session) TeamsDir() string { return filepath.Join(s.ConfigDir, "teams") }
