// Package backendtest is the conformance suite every teammate backend runs
// (in-process, tmux, iTerm2): one test body, so the backends behave the
// same or the suite says which one does not.
//
// A backend's test calls Run with a constructor and its Hooks. The suite
// spawns Teammates: specs that both an in-process backend (Spec.Run) and a
// pane backend (Spec.Argv, a small sh program) can start, and that write a
// marker file once they run, so the suite can observe the start without
// knowing how the backend works.
package backendtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/backend"
)

// Deadline bounds every wait of the suite (a start, a death, a close). It
// is generous because the machine may be loaded; no test is timed.
const Deadline = 30 * time.Second

// Hooks adapt the suite to one backend.
type Hooks struct {
	// KillExternally ends teammate h behind the backend's back, the way a
	// crash or a user would: for in-process, tm.Crash(); for tmux, kill
	// -9 of the pane's process. Required.
	KillExternally func(t *testing.T, h backend.Handle, tm *Teammate)

	// ExitStatus says the backend can tell a clean exit from a failed
	// one (Err nil after exit 0, non-nil after exit 3). A backend that
	// only sees its pane disappear leaves it false, and the suite then
	// checks only that Done closes.
	ExitStatus bool
}

// Teammate is one spec the suite spawns, and how to observe it.
type Teammate struct {
	Spec   backend.Spec
	Marker string // written (with a pid for pane backends) once it runs

	crashOnce sync.Once
	crash     chan struct{}
}

// NewTeammate returns a teammate with id agentID that writes its marker
// and then runs until it is killed (sleep 1000 for pane backends). Its
// files live in t.TempDir().
func NewTeammate(t testing.TB, agentID string) *Teammate {
	return newTeammate(t, agentID, -1)
}

// NewExitingTeammate returns a teammate that writes its marker and then
// exits with status code (in-process: Run returns nil for 0, an error
// otherwise).
func NewExitingTeammate(t testing.TB, agentID string, code int) *Teammate {
	if code < 0 || code > 255 {
		t.Fatalf("NewExitingTeammate(%q, %d): code must be 0..255", agentID, code)
	}
	return newTeammate(t, agentID, code)
}

func newTeammate(t testing.TB, agentID string, code int) *Teammate {
	dir := t.TempDir()
	name, team, _ := strings.Cut(agentID, "@")
	tm := &Teammate{Marker: filepath.Join(dir, "started"), crash: make(chan struct{})}
	// $$ is the pid of the program the pane finally runs: the script
	// execs sleep, so kill -9 of that pid ends the teammate.
	script := `echo $$ > "$1.tmp" && mv "$1.tmp" "$1" && exec sleep 1000`
	if code >= 0 {
		script = `echo $$ > "$1.tmp" && mv "$1.tmp" "$1" && exit ` + strconv.Itoa(code)
	}
	tm.Spec = backend.Spec{
		AgentID: agentID,
		Name:    name,
		Team:    team,
		Color:   "blue",
		Cwd:     dir,
		Argv:    []string{"/bin/sh", "-c", script, "sh", tm.Marker},
		// The masked variable checks that KEY='' reaches the program.
		Env: map[string]string{"TROUPE_BACKENDTEST": "1", "TROUPE_BACKENDTEST_MASKED": ""},
		Run: func(ctx context.Context) error {
			if err := os.WriteFile(tm.Marker, []byte("in-process\n"), 0o600); err != nil {
				return err
			}
			if code == 0 {
				return nil
			}
			if code > 0 {
				return fmt.Errorf("teammate exited with status %d", code)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-tm.crash:
				return errors.New("teammate crashed")
			}
		},
	}
	return tm
}

// Crash makes an in-process teammate's Run return an error, as a teammate
// failing on its own would. Pane backends ignore it.
func (tm *Teammate) Crash() { tm.crashOnce.Do(func() { close(tm.crash) }) }

// Started reports whether the teammate has written its marker.
func (tm *Teammate) Started() bool {
	_, err := os.Stat(tm.Marker)
	return err == nil
}

// WaitStarted waits until the marker exists and returns its content (the
// pid for pane backends), failing t after Deadline or if h ends first.
func (tm *Teammate) WaitStarted(t testing.TB, h backend.Handle) string {
	t.Helper()
	deadline := time.Now().Add(Deadline)
	for {
		if b, err := os.ReadFile(tm.Marker); err == nil {
			return strings.TrimSpace(string(b))
		}
		select {
		case <-h.Done():
			if b, err := os.ReadFile(tm.Marker); err == nil {
				return strings.TrimSpace(string(b))
			}
			t.Fatalf("teammate %s ended before it started: %v", tm.Spec.AgentID, h.Err())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("teammate %s did not write %s within %v", tm.Spec.AgentID, tm.Marker, Deadline)
		}
	}
}

// WaitDone waits for h's Done, failing t after Deadline.
func WaitDone(t testing.TB, h backend.Handle, what string) {
	t.Helper()
	select {
	case <-h.Done():
	case <-time.After(Deadline):
		t.Fatalf("%s: teammate %s (pane %s) not done within %v", what, h.PaneID(), h.Backend(), Deadline)
	}
}

func isDone(h backend.Handle) bool {
	select {
	case <-h.Done():
		return true
	default:
		return false
	}
}

// killCtx bounds a Kill or Close call of the suite.
func killCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Deadline)
	t.Cleanup(cancel)
	return ctx
}

// Run runs the conformance suite. newBackend returns a fresh backend for
// one subtest; the suite closes it, and newBackend may register cleanups
// of its own (a tmux server to kill). Subtests do not run in parallel, so
// the goroutine count is meaningful.
func Run(t *testing.T, newBackend func(t *testing.T) backend.Backend, hooks Hooks) {
	if hooks.KillExternally == nil {
		t.Fatal("backendtest.Run: Hooks.KillExternally is required")
	}
	tests := []struct {
		name string
		f    func(t *testing.T, b backend.Backend, hooks Hooks)
	}{
		{"SpawnRunsKillEnds", testSpawnKill},
		{"SpawnSameIDRefused", testSameID},
		{"ExternalDeath", testExternalDeath},
		{"CleanExit", testCleanExit},
		{"FailedExit", testFailedExit},
		{"CloseKillsAll", testClose},
		{"ConcurrentSpawns", testConcurrent},
		{"KillDuringClose", testKillDuringClose},
		{"BadSpec", testBadSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			b := newBackend(t)
			tt.f(t, b, hooks)
			if err := b.Close(killCtx(t)); err != nil {
				t.Errorf("Close = %v; want nil", err)
			}
			checkGoroutines(t, before)
		})
	}
}

// checkGoroutines waits until no more goroutines run than before.
func checkGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(Deadline)
	for {
		n := runtime.NumGoroutine()
		if n <= before {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("goroutines after Close = %d; want <= %d (before the backend)\n%s", n, before, buf)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func spawn(t *testing.T, b backend.Backend, tm *Teammate) backend.Handle {
	t.Helper()
	h, err := b.Spawn(t.Context(), tm.Spec)
	if err != nil {
		t.Fatalf("Spawn(%s) = %v; want nil", tm.Spec.AgentID, err)
	}
	return h
}

func testSpawnKill(t *testing.T, b backend.Backend, _ Hooks) {
	tm := NewTeammate(t, "alpha@suite")
	h := spawn(t, b, tm)
	if got, want := h.Backend(), b.Name(); got != want {
		t.Errorf("Handle.Backend() = %q; want %q", got, want)
	}
	if h.PaneID() == "" {
		t.Error("Handle.PaneID() is empty")
	}
	tm.WaitStarted(t, h)
	if isDone(h) {
		t.Fatalf("Done closed while the teammate runs (Err %v)", h.Err())
	}
	if err := h.Kill(killCtx(t)); err != nil {
		t.Fatalf("Kill = %v; want nil", err)
	}
	if !isDone(h) {
		t.Fatal("Done not closed after Kill returned")
	}
	if err := h.Err(); !errors.Is(err, backend.ErrKilled) {
		t.Errorf("Err after Kill = %v; want backend.ErrKilled", err)
	}
	if err := h.Kill(killCtx(t)); err != nil {
		t.Errorf("second Kill = %v; want nil (no-op)", err)
	}
}

func testSameID(t *testing.T, b backend.Backend, _ Hooks) {
	tm := NewTeammate(t, "alpha@suite")
	h := spawn(t, b, tm)
	if h2, err := b.Spawn(t.Context(), tm.Spec); !errors.Is(err, backend.ErrRunning) {
		t.Fatalf("second Spawn(%s) = %v, %v; want backend.ErrRunning", tm.Spec.AgentID, h2, err)
	}
	tm.WaitStarted(t, h)
	if err := h.Kill(killCtx(t)); err != nil {
		t.Fatalf("Kill = %v", err)
	}
	// The id is free again once the teammate ended.
	tm2 := NewTeammate(t, "alpha@suite")
	h2 := spawn(t, b, tm2)
	tm2.WaitStarted(t, h2)
	if err := h2.Kill(killCtx(t)); err != nil {
		t.Fatalf("Kill of the respawned teammate = %v", err)
	}
}

func testExternalDeath(t *testing.T, b backend.Backend, hooks Hooks) {
	tm := NewTeammate(t, "alpha@suite")
	h := spawn(t, b, tm)
	tm.WaitStarted(t, h)
	hooks.KillExternally(t, h, tm)
	WaitDone(t, h, "after an external kill")
	err := h.Err()
	if err == nil || errors.Is(err, backend.ErrKilled) {
		t.Errorf("Err after an external kill = %v; want a non-nil error other than backend.ErrKilled", err)
	}
	if err := h.Kill(killCtx(t)); err != nil {
		t.Errorf("Kill of a dead teammate = %v; want nil (no-op)", err)
	}
	tm2 := NewTeammate(t, "alpha@suite")
	h2 := spawn(t, b, tm2)
	tm2.WaitStarted(t, h2)
}

func testCleanExit(t *testing.T, b backend.Backend, hooks Hooks) {
	tm := NewExitingTeammate(t, "alpha@suite", 0)
	h := spawn(t, b, tm)
	tm.WaitStarted(t, h)
	WaitDone(t, h, "after exit 0")
	if err := h.Err(); hooks.ExitStatus && err != nil {
		t.Errorf("Err after exit 0 = %v; want nil", err)
	}
}

func testFailedExit(t *testing.T, b backend.Backend, hooks Hooks) {
	tm := NewExitingTeammate(t, "alpha@suite", 3)
	h := spawn(t, b, tm)
	tm.WaitStarted(t, h)
	WaitDone(t, h, "after exit 3")
	if err := h.Err(); hooks.ExitStatus && err == nil {
		t.Error("Err after exit 3 = nil; want an error")
	}
}

func testClose(t *testing.T, b backend.Backend, _ Hooks) {
	var hs []backend.Handle
	for i := range 3 {
		tm := NewTeammate(t, fmt.Sprintf("m%d@suite", i))
		h := spawn(t, b, tm)
		tm.WaitStarted(t, h)
		hs = append(hs, h)
	}
	if err := b.Close(killCtx(t)); err != nil {
		t.Fatalf("Close = %v; want nil", err)
	}
	for _, h := range hs {
		if !isDone(h) {
			t.Errorf("teammate in pane %s not done after Close returned", h.PaneID())
			continue
		}
		if err := h.Err(); !errors.Is(err, backend.ErrKilled) {
			t.Errorf("Err after Close = %v; want backend.ErrKilled", err)
		}
	}
	tm := NewTeammate(t, "late@suite")
	if h, err := b.Spawn(t.Context(), tm.Spec); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("Spawn after Close = %v, %v; want backend.ErrClosed", h, err)
	}
	if err := b.Close(killCtx(t)); err != nil {
		t.Errorf("second Close = %v; want nil", err)
	}
}

func testConcurrent(t *testing.T, b backend.Backend, _ Hooks) {
	const n = 16
	tms := make([]*Teammate, n)
	hs := make([]backend.Handle, n)
	errs := make([]error, n)
	for i := range n {
		tms[i] = NewTeammate(t, fmt.Sprintf("w%02d@suite", i))
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { hs[i], errs[i] = b.Spawn(t.Context(), tms[i].Spec) })
	}
	wg.Wait()
	panes := map[string]string{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("concurrent Spawn(%s) = %v", tms[i].Spec.AgentID, errs[i])
		}
		tms[i].WaitStarted(t, hs[i])
		p := hs[i].PaneID()
		if other, ok := panes[p]; ok && p != backend.InProcess {
			t.Errorf("teammates %s and %s share pane %s", other, tms[i].Spec.AgentID, p)
		}
		panes[p] = tms[i].Spec.AgentID
	}

	// The same id spawned from n goroutines at once: exactly one wins.
	same := NewTeammate(t, "same@suite")
	var won sync.WaitGroup
	var mu sync.Mutex
	var winners []backend.Handle
	for range n {
		won.Go(func() {
			h, err := b.Spawn(t.Context(), same.Spec)
			switch {
			case err == nil:
				mu.Lock()
				winners = append(winners, h)
				mu.Unlock()
			case !errors.Is(err, backend.ErrRunning):
				t.Errorf("racing Spawn(%s) = %v; want nil or backend.ErrRunning", same.Spec.AgentID, err)
			}
		})
	}
	won.Wait()
	if len(winners) != 1 {
		t.Fatalf("racing Spawns of one id: %d succeeded; want 1", len(winners))
	}
	same.WaitStarted(t, winners[0])

	// Kill half concurrently; Close takes the rest.
	var kw sync.WaitGroup
	for i := 0; i < n; i += 2 {
		kw.Go(func() {
			if err := hs[i].Kill(killCtx(t)); err != nil {
				t.Errorf("concurrent Kill(%s) = %v", tms[i].Spec.AgentID, err)
			}
		})
	}
	kw.Wait()
}

// Kill and Close of the same teammates at once: each ends once, with
// ErrKilled, and neither call fails.
func testKillDuringClose(t *testing.T, b backend.Backend, _ Hooks) {
	var hs []backend.Handle
	for i := range 4 {
		tm := NewTeammate(t, fmt.Sprintf("k%d@suite", i))
		h := spawn(t, b, tm)
		tm.WaitStarted(t, h)
		hs = append(hs, h)
	}
	var wg sync.WaitGroup
	for _, h := range hs {
		wg.Go(func() {
			if err := h.Kill(killCtx(t)); err != nil {
				t.Errorf("Kill during Close = %v", err)
			}
		})
	}
	wg.Go(func() {
		if err := b.Close(killCtx(t)); err != nil {
			t.Errorf("Close during Kills = %v", err)
		}
	})
	wg.Wait()
	for _, h := range hs {
		if !isDone(h) {
			t.Errorf("teammate in pane %s not done", h.PaneID())
		} else if err := h.Err(); !errors.Is(err, backend.ErrKilled) {
			t.Errorf("Err = %v; want backend.ErrKilled", err)
		}
	}
}

func testBadSpec(t *testing.T, b backend.Backend, _ Hooks) {
	good := NewTeammate(t, "bad@suite").Spec
	noID := good
	noID.AgentID = ""
	if h, err := b.Spawn(t.Context(), noID); err == nil {
		t.Errorf("Spawn of a spec without AgentID = %v, nil; want an error", h)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if h, err := b.Spawn(ctx, good); err == nil {
		t.Errorf("Spawn with a cancelled ctx = %v, nil; want an error", h)
	}
	// The refused spawns did not take the id.
	h := spawn(t, b, NewTeammate(t, "bad@suite"))
	if err := h.Kill(killCtx(t)); err != nil {
		t.Errorf("Kill = %v", err)
	}
}
