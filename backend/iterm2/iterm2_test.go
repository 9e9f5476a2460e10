package iterm2_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/backend/backendtest"
	"github.com/troupe-dev/troupe/backend/iterm2"
)

// fake is one fake it2 with its state.
type fake struct {
	path  string // the it2 executable
	state string
}

func newFake(t *testing.T) *fake {
	t.Helper()
	f := &fake{}
	f.path, f.state = backendtest.FakeIt2(t)
	t.Cleanup(func() { f.killAll(t) })
	return f
}

// killAll kills whatever the fake still runs, so that no test leaves
// processes behind even when it fails.
func (f *fake) killAll(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(f.state, "sessions", "*", "pid"))
	for _, d := range dirs {
		if b, err := os.ReadFile(d); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// backend returns a backend using the fake, the leader in session LEADER-1.
func (f *fake) backend(t *testing.T, poll time.Duration) *iterm2.Backend {
	t.Helper()
	env := map[string]string{"ITERM_SESSION_ID": "w0t0p0:LEADER-1"}
	b, err := iterm2.New(iterm2.Config{It2Path: f.path, Getenv: func(k string) string { return env[k] }, PollInterval: poll})
	if err != nil {
		t.Fatalf("New = %v", err)
	}
	t.Cleanup(func() { b.Close(context.Background()) })
	return b
}

// calls returns the logged invocations, without the supervisor's
// "session list".
func (f *fake) calls(t *testing.T) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.state, "log"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out [][]string
	for line := range strings.SplitSeq(strings.TrimSuffix(string(b), "\n"), "\n") {
		if line == "" {
			continue
		}
		args := strings.Split(strings.TrimSuffix(line, "\037"), "\037")
		if len(args) == 2 && args[0] == "session" && args[1] == "list" {
			continue
		}
		out = append(out, args)
	}
	return out
}

// pid waits for the pid of the process running in session id.
func (f *fake) pid(t *testing.T, id string) int {
	t.Helper()
	deadline := time.Now().Add(backendtest.Deadline)
	for {
		b, err := os.ReadFile(filepath.Join(f.state, "sessions", id, "pid"))
		if err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("pid file of %s: %v", id, err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s has no pid after %v", id, backendtest.Deadline)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (f *fake) exists(id string) bool {
	_, err := os.Stat(filepath.Join(f.state, "sessions", id))
	return err == nil
}

func TestConformance(t *testing.T) {
	var f *fake
	backendtest.Run(t, func(t *testing.T) backend.Backend {
		f = newFake(t)
		return f.backend(t, 100*time.Millisecond)
	}, backendtest.Hooks{
		KillExternally: func(t *testing.T, h backend.Handle, _ *backendtest.Teammate) {
			if err := syscall.Kill(f.pid(t, h.PaneID()), syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		},
		ExitStatus: false,
	})
}

func TestExactCommands(t *testing.T) {
	f := newFake(t)
	b := f.backend(t, time.Hour) // no polling: the log holds only Spawn and Kill
	tm1 := backendtest.NewTeammate(t, "one@team")
	tm1.Spec.Cwd = filepath.Join(t.TempDir(), "it's")
	os.Mkdir(tm1.Spec.Cwd, 0o700)
	h1, err := b.Spawn(t.Context(), tm1.Spec)
	if err != nil {
		t.Fatalf("Spawn = %v", err)
	}
	tm1.WaitStarted(t, h1)
	tm2 := backendtest.NewTeammate(t, "two@team")
	h2, err := b.Spawn(t.Context(), tm2.Spec)
	if err != nil {
		t.Fatalf("Spawn = %v", err)
	}
	tm2.WaitStarted(t, h2)
	if err := h2.Kill(t.Context()); err != nil {
		t.Fatalf("Kill = %v", err)
	}
	if f.exists(h2.PaneID()) {
		t.Errorf("session %s still exists after Kill", h2.PaneID())
	}

	s1, s2 := h1.PaneID(), h2.PaneID()
	cmd1 := paneCommand(t, f.calls(t), s1, tm1.Spec)
	cmd2 := paneCommand(t, f.calls(t), s2, tm2.Spec)
	if !strings.Contains(cmd1, `'\''s'`) {
		t.Fatalf("command line %s lacks the quoting this test checks", cmd1)
	}
	want := [][]string{
		{"session", "split", "-v", "-s", "LEADER-1"},
		{"session", "send", "-s", s1, "\x15"},
		{"session", "run", "-s", s1, cmd1},
		{"session", "split", "-s", s1},
		{"session", "send", "-s", s2, "\x15"},
		{"session", "run", "-s", s2, cmd2},
		{"session", "close", "-f", "-s", s2},
	}
	if got := f.calls(t); !reflect.DeepEqual(got, want) {
		t.Errorf("it2 calls =\n%q\nwant\n%q", got, want)
	}
}

func TestNoLeaderSession(t *testing.T) {
	f := newFake(t)
	b, err := iterm2.New(iterm2.Config{It2Path: f.path, Getenv: func(string) string { return "" }, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close(context.Background()) })
	tm := backendtest.NewTeammate(t, "a@team")
	h, err := b.Spawn(t.Context(), tm.Spec)
	if err != nil {
		t.Fatalf("Spawn = %v", err)
	}
	tm.WaitStarted(t, h)
	if got := f.calls(t)[0]; !reflect.DeepEqual(got, []string{"session", "split", "-v"}) {
		t.Errorf("first call = %q; want a plain split -v", got)
	}
}

// A split target that is gone is pruned (its teammate ends) and the split
// retried on the teammate before it.
func TestDeadTargetPruned(t *testing.T) {
	f := newFake(t)
	b := f.backend(t, time.Hour) // the supervisor must not notice first
	tmA := backendtest.NewTeammate(t, "a@team")
	hA, err := b.Spawn(t.Context(), tmA.Spec)
	if err != nil {
		t.Fatal(err)
	}
	tmB := backendtest.NewTeammate(t, "b@team")
	hB, err := b.Spawn(t.Context(), tmB.Spec)
	if err != nil {
		t.Fatal(err)
	}
	tmA.WaitStarted(t, hA)
	tmB.WaitStarted(t, hB)
	// The user closes B's session.
	syscall.Kill(f.pid(t, hB.PaneID()), syscall.SIGKILL)
	deadline := time.Now().Add(backendtest.Deadline)
	for f.exists(hB.PaneID()) {
		if time.Now().After(deadline) {
			t.Fatal("the fake did not close the session of a dead process")
		}
		time.Sleep(10 * time.Millisecond)
	}
	tmC := backendtest.NewTeammate(t, "c@team")
	hC, err := b.Spawn(t.Context(), tmC.Spec)
	if err != nil {
		t.Fatalf("Spawn after a dead target = %v", err)
	}
	tmC.WaitStarted(t, hC)
	backendtest.WaitDone(t, hB, "pruned")
	if !errors.Is(hB.Err(), backend.ErrPaneGone) {
		t.Errorf("Err of the pruned teammate = %v; want ErrPaneGone", hB.Err())
	}
	calls := f.calls(t)
	var splits [][]string
	for _, c := range calls {
		if c[1] == "split" {
			splits = append(splits, c)
		}
	}
	want := [][]string{
		{"session", "split", "-v", "-s", "LEADER-1"},
		{"session", "split", "-s", hA.PaneID()},
		{"session", "split", "-s", hB.PaneID()},
		{"session", "split", "-s", hA.PaneID()},
	}
	if !reflect.DeepEqual(splits, want) {
		t.Errorf("splits =\n%q\nwant\n%q", splits, want)
	}
}

// Close closes only troupe's sessions.
func TestCloseLeavesOtherSessions(t *testing.T) {
	f := newFake(t)
	b := f.backend(t, 100*time.Millisecond)
	tm := backendtest.NewTeammate(t, "a@team")
	h, err := b.Spawn(t.Context(), tm.Spec)
	if err != nil {
		t.Fatal(err)
	}
	tm.WaitStarted(t, h)
	if err := os.Mkdir(filepath.Join(f.state, "sessions", "USER-2"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(t.Context()); err != nil {
		t.Fatalf("Close = %v", err)
	}
	for _, id := range []string{"LEADER-1", "USER-2"} {
		if !f.exists(id) {
			t.Errorf("session %s closed by Close; want only troupe's", id)
		}
	}
	if f.exists(h.PaneID()) {
		t.Errorf("troupe's session %s survived Close", h.PaneID())
	}
	for _, c := range f.calls(t) {
		if c[1] == "close" && c[len(c)-1] != h.PaneID() {
			t.Errorf("Close sent %q", c)
		}
	}
}

func TestSplitFailure(t *testing.T) {
	f := newFake(t)
	b := f.backend(t, time.Hour)
	os.WriteFile(filepath.Join(f.state, "fail-split"), nil, 0o600)
	tm := backendtest.NewTeammate(t, "a@team")
	_, err := b.Spawn(t.Context(), tm.Spec)
	if err == nil || !strings.Contains(err.Error(), "split refused") {
		t.Fatalf("Spawn with a failing split = %v; want it2's message", err)
	}
	os.Remove(filepath.Join(f.state, "fail-split"))
	h, err := b.Spawn(t.Context(), tm.Spec)
	if err != nil {
		t.Fatalf("Spawn after the failure = %v; want the id free again", err)
	}
	tm.WaitStarted(t, h)
}

func TestNew(t *testing.T) {
	_, err := iterm2.New(iterm2.Config{It2Path: filepath.Join(t.TempDir(), "it2")})
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "pipx install it2") {
		t.Errorf("New without it2 = %v; want ErrUnavailable with install hints", err)
	}
	f := newFake(t)
	_, err = iterm2.New(iterm2.Config{It2Path: f.path, Getenv: func(string) string { return "w0t0p0:bad id" }})
	if err == nil || !strings.Contains(err.Error(), `"bad id"`) {
		t.Errorf("New with a bad $ITERM_SESSION_ID = %v; want an error naming it", err)
	}
}

// paneCommand returns the command line Spawn should have run in session
// id for spec: backend.PaneCommand with the environment file the logged
// line names (a fresh random path).
func paneCommand(t *testing.T, calls [][]string, id string, spec backend.Spec) string {
	t.Helper()
	for _, c := range calls {
		if len(c) == 5 && c[0] == "session" && c[1] == "run" && c[3] == id {
			rest, ok := strings.CutPrefix(c[4], ". '")
			file, _, ok2 := strings.Cut(rest, "'")
			if !ok || !ok2 {
				t.Fatalf("command line %q does not start by reading an environment file", c[4])
			}
			line, err := backend.PaneCommand(spec.Cwd, file, spec.Argv)
			if err != nil {
				t.Fatal(err)
			}
			return line
		}
	}
	t.Fatalf("no session run for %s in %q", id, calls)
	return ""
}

// A teammate's variables reach it through a file: they are on no it2
// command line (which the shell would show and keep in its history),
// and the file is gone once the teammate runs.
func TestSecretsReachTheTeammateOffTheLine(t *testing.T) {
	f := newFake(t)
	b := f.backend(t, time.Hour)
	const secret = "sk-ant-fake-0123456789abcdef"
	out := filepath.Join(t.TempDir(), "seen")
	spec := backend.Spec{AgentID: "s@team", Name: "s", Cwd: t.TempDir(),
		Argv: []string{"/bin/sh", "-c", `echo "$ANTHROPIC_API_KEY|$OTEL_EXPORTER_OTLP_HEADERS" > "$1.tmp" && mv "$1.tmp" "$1" && exec sleep 1000`, "sh", out},
		Env:  map[string]string{"ANTHROPIC_API_KEY": secret, "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer " + secret}}
	h, err := b.Spawn(t.Context(), spec)
	if err != nil {
		t.Fatalf("Spawn = %v", err)
	}
	got := waitFile(t, h, out)
	if want := secret + "|authorization=Bearer " + secret + "\n"; got != want {
		t.Errorf("teammate saw %q; want %q", got, want)
	}
	log, err := os.ReadFile(filepath.Join(f.state, "log"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(log), secret) {
		t.Errorf("it2 was given the secret on its command line:\n%s", log)
	}
	line := paneCommand(t, f.calls(t), h.PaneID(), spec)
	file := strings.SplitN(line, "'", 3)[1]
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("environment file %s still there after the teammate started: %v", file, err)
	}
	dir := filepath.Dir(file)
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("folder of environment files %s still there after Close: %v", dir, err)
	}
}

// waitFile waits for path to exist and returns its content, failing t
// when h ends first or after backendtest.Deadline.
func waitFile(t *testing.T, h backend.Handle, path string) string {
	t.Helper()
	deadline := time.Now().Add(backendtest.Deadline)
	for {
		if b, err := os.ReadFile(path); err == nil {
			return string(b)
		}
		select {
		case <-h.Done():
			t.Fatalf("teammate ended: %v", h.Err())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the teammate did not write %s", path)
		}
	}
}
