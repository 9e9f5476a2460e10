package tmux_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/backend/backendtest"
	"github.com/troupe-dev/troupe/backend/tmux"
	"github.com/troupe-dev/troupe/internal/proctest"
)

// testPoll keeps the suite quick; the default is exercised by TestDefaultPoll.
const testPoll = 100 * time.Millisecond

// server is a private tmux server for one test, killed at its end.
type server struct {
	t      testing.TB
	socket string // -L name
}

func newServer(t testing.TB) *server {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; the tmux backend tests need it (apt-get install tmux)")
	}
	var b [6]byte
	rand.Read(b[:])
	s := &server{t: t, socket: "troupe-test-" + hex.EncodeToString(b[:])}
	t.Cleanup(func() {
		exec.Command("tmux", "-L", s.socket, "kill-server").Run()
		os.Remove(s.socketPath())
	})
	return s
}

// socketPath is where tmux puts the -L socket (tmux leaves it behind).
func (s *server) socketPath() string {
	dir := os.Getenv("TMUX_TMPDIR")
	if dir == "" {
		dir = "/tmp"
	}
	return filepath.Join(dir, fmt.Sprintf("tmux-%d", os.Getuid()), s.socket)
}

// tmux runs a tmux command on the private server and returns its output.
func (s *server) tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func (s *server) must(args ...string) string {
	s.t.Helper()
	out, err := s.tmux(args...)
	if err != nil {
		s.t.Fatalf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return out
}

// panes lists pane ids on the server, or nil when it does not run.
func (s *server) panes() []string {
	out, err := s.tmux("list-panes", "-a", "-F", "#{pane_id}")
	if err != nil {
		return nil
	}
	return strings.Fields(out)
}

func (s *server) hasPane(p string) bool {
	for _, x := range s.panes() {
		if x == p {
			return true
		}
	}
	return false
}

// outside returns a backend that uses s as its dedicated server.
func (s *server) outside(t testing.TB) *tmux.Backend {
	t.Helper()
	b, err := tmux.New(tmux.Config{Socket: s.socket, Getenv: func(string) string { return "" }, PollInterval: testPoll})
	if err != nil {
		t.Fatalf("New = %v", err)
	}
	t.Cleanup(func() { b.Close(context.Background()) })
	return b
}

// leader starts a leader session on s and returns a backend that runs
// "inside" it, as a lead started in that pane would, and the leader pane.
func (s *server) inside(t testing.TB) (*tmux.Backend, string) {
	t.Helper()
	leader := s.must("new-session", "-d", "-s", "lead", "-x", "240", "-y", "120", "-P", "-F", "#{pane_id}", "--", "sleep", "100000")
	sock := s.must("display-message", "-p", "-t", leader, "#{socket_path}")
	env := map[string]string{"TMUX": sock + ",1234,0", "TMUX_PANE": leader}
	b, err := tmux.New(tmux.Config{Getenv: func(k string) string { return env[k] }, PollInterval: testPoll})
	if err != nil {
		t.Fatalf("New = %v", err)
	}
	if !b.Inside() {
		t.Fatal("Inside() = false with $TMUX set")
	}
	t.Cleanup(func() { b.Close(context.Background()) })
	return b, leader
}

func killPID(t *testing.T, h backend.Handle, _ *backendtest.Teammate) {
	t.Helper()
	pid := h.(*tmux.Handle).PID()
	if pid <= 1 {
		t.Fatalf("PID() = %d", pid)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d: %v", pid, err)
	}
}

func TestConformanceOutside(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend { return newServer(t).outside(t) },
		backendtest.Hooks{KillExternally: killPID, ExitStatus: true})
}

func TestConformanceInside(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend {
		b, _ := newServer(t).inside(t)
		return b
	}, backendtest.Hooks{KillExternally: killPID, ExitStatus: true})
}

func spawn(t *testing.T, b backend.Backend, tm *backendtest.Teammate) *tmux.Handle {
	t.Helper()
	h, err := b.Spawn(t.Context(), tm.Spec)
	if err != nil {
		t.Fatalf("Spawn(%s) = %v", tm.Spec.AgentID, err)
	}
	return h.(*tmux.Handle)
}

func TestOutsideDedicatedSession(t *testing.T) {
	s := newServer(t)
	b := s.outside(t)
	tm := backendtest.NewTeammate(t, "helper@team")
	tm.Spec.Color = "orange"
	h := spawn(t, b, tm)
	if pid := tm.WaitStarted(t, h); pid != strconv.Itoa(h.PID()) {
		t.Errorf("teammate pid %s; PID() = %d; want the same (the pane execs it)", pid, h.PID())
	}
	// The first teammate reuses the new session's pane.
	if got := s.panes(); len(got) != 1 || got[0] != h.PaneID() {
		t.Errorf("panes = %v; want just the teammate's %s", got, h.PaneID())
	}
	if got, want := b.AttachCommand(), "tmux -L "+s.socket+" attach -t troupe-swarm"; got != want {
		t.Errorf("AttachCommand() = %q; want %q", got, want)
	}
	where := s.must("display-message", "-p", "-t", h.PaneID(), "#{session_name}:#{window_name} #{pane_title}")
	if want := "troupe-swarm:swarm-view helper"; where != want {
		t.Errorf("pane is %q; want %q", where, want)
	}
	opts := s.must("show-options", "-p", "-t", h.PaneID())
	for _, want := range []string{"remain-on-exit on", "window-style bg=default,fg=colour208", `pane-border-format "#[fg=colour208,bold] #{pane_title} #[default]"`} {
		if !strings.Contains(opts, want) {
			t.Errorf("pane options %q lack %q", opts, want)
		}
	}
	wopts := s.must("show-options", "-w", "-t", h.PaneID())
	for _, want := range []string{"pane-border-status top", "pane-border-style fg=colour208", "pane-active-border-style fg=colour208"} {
		if !strings.Contains(wopts, want) {
			t.Errorf("window options %q lack %q", wopts, want)
		}
	}

	tm2 := backendtest.NewTeammate(t, "other@team")
	h2 := spawn(t, b, tm2)
	tm2.WaitStarted(t, h2)
	if got := s.panes(); len(got) != 2 {
		t.Errorf("panes after a second spawn = %v; want 2", got)
	}
	if err := b.Close(t.Context()); err != nil {
		t.Fatalf("Close = %v", err)
	}
	// troupe started this server and nothing else is on it: it is gone,
	// socket file included.
	if out, err := s.tmux("list-sessions"); err == nil {
		t.Errorf("server still runs after Close: %s", out)
	}
	if _, err := os.Stat(s.socketPath()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket file after Close: %v; want it removed", err)
	}
}

func TestInsideSplitsLeaderWindow(t *testing.T) {
	s := newServer(t)
	b, leader := s.inside(t)
	window := s.must("display-message", "-p", "-t", leader, "#{window_id}")
	if got := b.AttachCommand(); got != "" {
		t.Errorf("AttachCommand() inside tmux = %q; want empty", got)
	}
	var hs []*tmux.Handle
	for i := range 4 {
		tm := backendtest.NewTeammate(t, fmt.Sprintf("m%d@team", i))
		h := spawn(t, b, tm)
		tm.WaitStarted(t, h)
		hs = append(hs, h)
		if i == 0 {
			// The first teammate takes 70% of the leader's width.
			lw, _ := strconv.Atoi(s.must("display-message", "-p", "-t", leader, "#{pane_width}"))
			tw, _ := strconv.Atoi(s.must("display-message", "-p", "-t", h.PaneID(), "#{pane_width}"))
			if tw < 2*lw {
				t.Errorf("after the first split, leader width %d, teammate %d; want the teammate at about 70%%", lw, tw)
			}
		}
	}
	for _, h := range hs {
		if w := s.must("display-message", "-p", "-t", h.PaneID(), "#{window_id}"); w != window {
			t.Errorf("teammate pane %s in window %s; want the leader's %s", h.PaneID(), w, window)
		}
	}
	// main-vertical: the leader alone on the left, 30% wide.
	lw, _ := strconv.Atoi(s.must("display-message", "-p", "-t", leader, "#{pane_width}"))
	if lw < 60 || lw > 80 {
		t.Errorf("leader width after re-tiling = %d; want about 30%% of 240", lw)
	}
	if left := s.must("display-message", "-p", "-t", leader, "#{pane_left}"); left != "0" {
		t.Errorf("leader pane_left = %s; want 0", left)
	}
	if err := b.Close(t.Context()); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if got := s.panes(); len(got) != 1 || got[0] != leader {
		t.Errorf("panes after Close = %v; want only the leader %s", got, leader)
	}
}

// Close kills only troupe's panes: a pane someone else made on the same
// server survives, and so does the server.
func TestCloseLeavesForeignPanes(t *testing.T) {
	s := newServer(t)
	b := s.outside(t)
	tm := backendtest.NewTeammate(t, "a@team")
	h := spawn(t, b, tm)
	tm.WaitStarted(t, h)
	foreign := s.must("split-window", "-d", "-t", h.PaneID(), "-P", "-F", "#{pane_id}", "--", "sleep", "100000")
	tm2 := backendtest.NewTeammate(t, "b@team")
	h2 := spawn(t, b, tm2)
	tm2.WaitStarted(t, h2)
	if err := b.Close(t.Context()); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if got := s.panes(); len(got) != 1 || got[0] != foreign {
		t.Errorf("panes after Close = %v; want only the foreign pane %s", got, foreign)
	}
	if _, err := os.Stat(s.socketPath()); err != nil {
		t.Errorf("socket of the server still in use: %v", err)
	}
}

func TestPaneClosedBySomeoneElse(t *testing.T) {
	s := newServer(t)
	b := s.outside(t)
	tm := backendtest.NewTeammate(t, "a@team")
	h := spawn(t, b, tm)
	tm.WaitStarted(t, h)
	s.must("kill-pane", "-t", h.PaneID())
	backendtest.WaitDone(t, h, "pane killed by someone else")
	if !errors.Is(h.Err(), backend.ErrPaneGone) {
		t.Errorf("Err = %v; want backend.ErrPaneGone", h.Err())
	}
}

func TestServerKilledBySomeoneElse(t *testing.T) {
	s := newServer(t)
	b := s.outside(t)
	tm := backendtest.NewTeammate(t, "a@team")
	h := spawn(t, b, tm)
	tm.WaitStarted(t, h)
	s.must("kill-server")
	backendtest.WaitDone(t, h, "server killed")
	if !errors.Is(h.Err(), backend.ErrPaneGone) {
		t.Errorf("Err = %v; want backend.ErrPaneGone", h.Err())
	}
	// The next spawn starts a new server.
	tm2 := backendtest.NewTeammate(t, "a@team")
	h2 := spawn(t, b, tm2)
	tm2.WaitStarted(t, h2)
}

func TestExitStatusAndDeadPaneRemoved(t *testing.T) {
	s := newServer(t)
	b := s.outside(t)
	keep := backendtest.NewTeammate(t, "keep@team") // keeps the session alive
	hk := spawn(t, b, keep)
	keep.WaitStarted(t, hk)

	tm := backendtest.NewExitingTeammate(t, "three@team", 3)
	h := spawn(t, b, tm)
	backendtest.WaitDone(t, h, "exit 3")
	var ee *backend.ExitError
	if !errors.As(h.Err(), &ee) || ee.Status != 3 || ee.Signal != 0 {
		t.Errorf("Err = %v; want ExitError{Status: 3}", h.Err())
	}
	if s.hasPane(h.PaneID()) {
		t.Errorf("dead pane %s still there after its status was read", h.PaneID())
	}

	// A failing teammate's last words reach Err. The program lingers a
	// moment before it exits: tmux 3.3a may close a pane whose process
	// exits at once before it has drawn the last output (see tail).
	hf, err := b.Spawn(t.Context(), backend.Spec{AgentID: "fail@team", Argv: []string{"/bin/sh", "-c",
		`echo "warming up"; echo "fatal: flag provided but not defined: -x" >&2; sleep 0.3; exit 2`}})
	if err != nil {
		t.Fatal(err)
	}
	backendtest.WaitDone(t, hf, "exit 2")
	if !errors.As(hf.Err(), &ee) || ee.Status != 2 || ee.Output != "warming up\nfatal: flag provided but not defined: -x" {
		t.Errorf("Err = %#v; want ExitError{Status: 2} with the pane's output", hf.Err())
	}
	if want := "teammate process exited with status 2: fatal: flag provided but not defined: -x"; hf.Err().Error() != want {
		t.Errorf("Err().Error() = %q; want %q", hf.Err().Error(), want)
	}

	tm9 := backendtest.NewTeammate(t, "nine@team")
	h9 := spawn(t, b, tm9)
	tm9.WaitStarted(t, h9)
	killPID(t, h9, tm9)
	backendtest.WaitDone(t, h9, "kill -9")
	if !errors.As(h9.Err(), &ee) || ee.Signal != int(syscall.SIGKILL) {
		t.Errorf("Err after kill -9 = %v; want ExitError{Signal: 9}", h9.Err())
	}

	tm0 := backendtest.NewExitingTeammate(t, "zero@team", 0)
	h0 := spawn(t, b, tm0)
	backendtest.WaitDone(t, h0, "exit 0")
	if h0.Err() != nil {
		t.Errorf("Err after exit 0 = %v; want nil", h0.Err())
	}
	if s.hasPane(h0.PaneID()) {
		t.Errorf("pane %s of a clean exit still there", h0.PaneID())
	}
	if !s.hasPane(hk.PaneID()) {
		t.Errorf("the live teammate's pane %s is gone", hk.PaneID())
	}
}

// Arguments and variables reach the program exactly, whatever they hold,
// and an empty value masks the server's.
func TestArgvAndEnvReachTheProgram(t *testing.T) {
	s := newServer(t)
	b := s.outside(t)
	dir := filepath.Join(t.TempDir(), "it's a dir $HOME")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"plain", "two words", "it's", `"double"`, "$HOME", "`id`", "a;", "b\\;", "#{pane_id}", "#(echo no)", "*", "~", "", "ünïcode ✓", "-n"}
	script := `{ pwd; printf '%s\n' "$@"; echo "masked=${TROUPE_MASKED-unset}"; echo "set=$TROUPE_SET"; } > "$0.tmp" && mv "$0.tmp" "$0"; exec sleep 1000`
	// The server has TROUPE_MASKED set; the spec masks it.
	s.must("new-session", "-d", "-s", "other", "--", "sleep", "100000")
	s.must("set-environment", "-g", "TROUPE_MASKED", "leaked")
	// Neither the placeholder nor the command goes through the user's
	// default-shell (a fish would read the quoting differently).
	s.must("set-option", "-g", "default-shell", "/bin/false")
	spec := backend.Spec{
		AgentID: "args@team", Name: "args", Cwd: dir,
		Argv: append([]string{"/bin/sh", "-c", script, out}, args...),
		Env:  map[string]string{"TROUPE_MASKED": "", "TROUPE_SET": "x y'z"},
	}
	h, err := b.Spawn(t.Context(), spec)
	if err != nil {
		t.Fatalf("Spawn = %v", err)
	}
	var got []byte
	deadline := time.Now().Add(backendtest.Deadline)
	for {
		if got, err = os.ReadFile(out); err == nil {
			break
		}
		select {
		case <-h.Done():
			t.Fatalf("teammate ended: %v", h.Err())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the program did not write its output")
		}
	}
	want := dir + "\n" + strings.Join(args, "\n") + "\nmasked=\nset=x y'z\n"
	if string(got) != want {
		t.Errorf("program saw\n%q\nwant\n%q", got, want)
	}
}

func TestTitleIsLiteral(t *testing.T) {
	s := newServer(t)
	b := s.outside(t)
	for i, name := range []string{"a#{pane_id}#(echo x)", "semi;", `back\;`, "#"} {
		tm := backendtest.NewTeammate(t, fmt.Sprintf("t%d@team", i))
		tm.Spec.Name = name
		h := spawn(t, b, tm)
		if got := s.must("display-message", "-p", "-t", h.PaneID(), "#{pane_title}"); got != name {
			t.Errorf("title of %q = %q; want it literally", name, got)
		}
	}
}

func TestSpawnRefusesBadSpec(t *testing.T) {
	s := newServer(t)
	b := s.outside(t)
	good := backendtest.NewTeammate(t, "x@team").Spec
	tests := []struct {
		name string
		edit func(*backend.Spec)
		want string
	}{
		{"no argv", func(s *backend.Spec) { s.Argv = nil }, "argv is empty"},
		{"newline in arg", func(s *backend.Spec) { s.Argv = []string{"/bin/echo", "a\nb"} }, "control character U+000A"},
		{"escape in env", func(s *backend.Spec) { s.Env = map[string]string{"A": "\x1b[2J"} }, "environment variable A"},
		{"bad env name", func(s *backend.Spec) { s.Env = map[string]string{"A-B": "1"} }, `name "A-B"`},
		{"relative cwd", func(s *backend.Spec) { s.Cwd = "rel/dir" }, `"rel/dir" is not absolute`},
		{"option argv0", func(s *backend.Spec) { s.Argv = []string{"-i", "x"} }, "starts with '-'"},
		{"unknown colour", func(s *backend.Spec) { s.Color = "mauve" }, `colour "mauve"`},
		{"control in name", func(s *backend.Spec) { s.Name = "a\tb" }, "name"},
		{"invalid utf-8", func(s *backend.Spec) { s.Argv = []string{"/bin/echo", "\xff"} }, "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := good
			tt.edit(&spec)
			h, err := b.Spawn(t.Context(), spec)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Spawn = %v, %v; want an error containing %q", h, err, tt.want)
			}
		})
	}
	if got := s.panes(); len(got) != 0 {
		t.Errorf("refused spawns left panes %v", got)
	}
}

func TestNewRefusesBadEnvironment(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"relative socket", map[string]string{"TMUX": "default,1,0", "TMUX_PANE": "%1"}, "want <socket path>"},
		{"no pane", map[string]string{"TMUX": "/tmp/tmux-1/default,1,0"}, "$TMUX_PANE"},
		{"bad pane", map[string]string{"TMUX": "/tmp/tmux-1/default,1,0", "TMUX_PANE": "1"}, "$TMUX_PANE"},
		{"no server", map[string]string{"TMUX": "/nonexistent/tmux-1/default,1,0", "TMUX_PANE": "%1"}, "$TMUX names the tmux server socket /nonexistent/tmux-1/default, which is not there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tmux.New(tmux.Config{Getenv: func(k string) string { return tt.env[k] }})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v; want an error containing %q", err, tt.want)
			}
		})
	}
	_, err := tmux.New(tmux.Config{TmuxPath: "/nonexistent/tmux", Getenv: func(string) string { return "" }})
	if !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("New with a missing tmux = %v; want backend.ErrUnavailable", err)
	}
	b, err := tmux.New(tmux.Config{Socket: "it's$x", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatalf("New with socket it's$x = %v", err)
	}
	if got, want := b.AttachCommand(), `tmux -L 'it'\''s$x' attach -t troupe-swarm`; got != want {
		t.Errorf("AttachCommand() = %q; want %q", got, want)
	}
	b.Close(t.Context())
	_, err = tmux.New(tmux.Config{Socket: "a/b", Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), `"a/b"`) {
		t.Errorf("New with socket a/b = %v; want an error naming it", err)
	}
}

// The default poll interval notices a death too.
func TestDefaultPoll(t *testing.T) {
	s := newServer(t)
	b, err := tmux.New(tmux.Config{Socket: s.socket, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close(context.Background()) })
	tm := backendtest.NewTeammate(t, "a@team")
	h := spawn(t, b, tm)
	tm.WaitStarted(t, h)
	start := time.Now()
	killPID(t, h, tm)
	backendtest.WaitDone(t, h, "kill -9 with the default poll")
	t.Logf("death noticed after %v (poll %v)", time.Since(start), tmux.DefaultPollInterval)
}

// BenchmarkSpawnKill measures one teammate's life in a pane: Spawn until
// its process runs (the marker is written), then Kill.
func BenchmarkSpawnKill(b *testing.B) {
	for _, mode := range []string{"outside", "inside"} {
		b.Run(mode, func(b *testing.B) {
			s := newServer(b)
			be := s.outside(b)
			if mode == "inside" {
				be.Close(b.Context())
				be, _ = s.inside(b)
			}
			// One teammate stays, so the dedicated server lives on.
			keep := backendtest.NewTeammate(b, "keep@bench")
			hk, err := be.Spawn(b.Context(), keep.Spec)
			if err != nil {
				b.Fatal(err)
			}
			keep.WaitStarted(b, hk)
			b.ResetTimer()
			for i := range b.N {
				tm := backendtest.NewTeammate(b, fmt.Sprintf("b%d@bench", i))
				h, err := be.Spawn(b.Context(), tm.Spec)
				if err != nil {
					b.Fatal(err)
				}
				tm.WaitStarted(b, h)
				if err := h.Kill(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDeathNotice measures how long after kill -9 of a teammate Done
// closes, with the default poll interval.
func BenchmarkDeathNotice(b *testing.B) {
	s := newServer(b)
	be, err := tmux.New(tmux.Config{Socket: s.socket, Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { be.Close(context.Background()) })
	keep := backendtest.NewTeammate(b, "keep@bench")
	hk, err := be.Spawn(b.Context(), keep.Spec)
	if err != nil {
		b.Fatal(err)
	}
	keep.WaitStarted(b, hk)
	var total time.Duration
	for i := range b.N {
		tm := backendtest.NewTeammate(b, fmt.Sprintf("d%d@bench", i))
		h, err := be.Spawn(b.Context(), tm.Spec)
		if err != nil {
			b.Fatal(err)
		}
		tm.WaitStarted(b, h)
		start := time.Now()
		syscall.Kill(h.(*tmux.Handle).PID(), syscall.SIGKILL)
		backendtest.WaitDone(b, h, "kill -9")
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/notice")
}

// A teammate's keys, tokens and OTLP headers reach it, and are on no
// command line while it starts and runs: not tmux's (every tmux the
// backend runs goes through a wrapper that logs its argv), not the pane's
// shell's (tmux's pane_start_command), not any process's in /proc, which
// every local user can read. The file that carried them is gone once the
// teammate runs, and its folder after Close.
func TestSecretsAreOnNoCommandLine(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc here")
	}
	s := newServer(t)
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "tmux-argv")
	wrapper := filepath.Join(dir, "tmux")
	script := "#!/bin/sh\nprintf '%s\\037' \"$@\" >> '" + log + "'\necho >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := tmux.New(tmux.Config{Socket: s.socket, TmuxPath: wrapper, Getenv: func(string) string { return "" }, PollInterval: testPoll})
	if err != nil {
		t.Fatalf("New = %v", err)
	}
	t.Cleanup(func() { b.Close(context.Background()) })

	var r [8]byte
	rand.Read(r[:])
	key := "sk-ant-fake-" + hex.EncodeToString(r[:])
	secrets := map[string]string{
		"ANTHROPIC_API_KEY":          key,
		"OPENAI_API_KEY":             "sk-openai-" + key,
		"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer otlp-" + key,
		"TROUPE_NATS_TOKEN":          "nats-" + key,
	}
	out := filepath.Join(t.TempDir(), "seen")
	spec := backend.Spec{AgentID: "secret@team", Name: "secret", Cwd: t.TempDir(),
		Argv: []string{"/bin/sh", "-c", `env > "$1.tmp" && mv "$1.tmp" "$1" && exec sleep 1000`, "sh", out},
		Env:  secrets}

	// Watch /proc while the teammate starts, for the short-lived ones.
	done := make(chan struct{})
	seen := make(chan []string, 1)
	go func() {
		var all []string
		for {
			all = append(all, proctest.CmdlinesHolding(key)...)
			select {
			case <-done:
				seen <- all
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	h, err := b.Spawn(t.Context(), spec)
	if err != nil {
		close(done)
		t.Fatalf("Spawn = %v", err)
	}
	var env []byte
	for deadline := time.Now().Add(backendtest.Deadline); ; {
		if env, err = os.ReadFile(out); err == nil {
			break
		}
		select {
		case <-h.Done():
			t.Fatalf("teammate ended: %v", h.Err())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the teammate did not write its environment")
		}
	}
	close(done)
	if got := append(<-seen, proctest.CmdlinesHolding(key)...); len(got) > 0 {
		t.Errorf("secrets on command lines:\n%s", strings.Join(got, "\n"))
	}
	for k, v := range secrets {
		if !strings.Contains("\n"+string(env), "\n"+k+"="+v+"\n") {
			t.Errorf("the teammate's environment lacks %s=%s:\n%s", k, v, env)
		}
	}
	argv, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(argv), key) {
		t.Errorf("tmux was given a secret on its command line:\n%s", argv)
	}
	start := s.must("list-panes", "-a", "-F", "#{pane_start_command}")
	if strings.Contains(start, key) {
		t.Errorf("a pane's start command holds a secret: %s", start)
	}
	if strings.Contains(string(argv), "respawn-pane") && !strings.Contains(string(argv), ". '") {
		t.Errorf("the pane command reads no environment file:\n%s", argv)
	}
	files, _ := filepath.Glob(filepath.Join(os.TempDir(), "troupe-pane-env-*", "*"))
	for _, f := range files {
		if strings.Contains(string(argv), f) {
			t.Errorf("environment file %s still there after the teammate started", f)
		}
	}
}
