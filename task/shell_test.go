package task

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitFor polls cond (real time: real processes) for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// nextEvent waits (real time) for an event of kind k on sub.
func nextEvent(t *testing.T, sub *Subscription, k EventKind) Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for %s: %v", k, err)
		}
		if e.Kind == k {
			return e
		}
	}
}

func shellRegistry(t *testing.T, cfg Config) *Registry {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = -1
	}
	return newTestRegistry(t, cfg)
}

func TestShellExitCodes(t *testing.T) {
	tests := []struct {
		command string
		status  Status
		code    int
		summary string
	}{
		{"echo hello; echo err >&2", Completed, 0, `completed (exit code 0)`},
		{"echo hello; exit 3", Failed, 3, `failed with exit code 3`},
		{"kill -9 $$", Failed, 137, `failed with exit code 137`}, // killed, but not by us
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			r := shellRegistry(t, Config{})
			sub := r.Subscribe()
			s, err := r.StartShell(ShellSpec{Command: tt.command, Description: "cmd", ToolUseID: "toolu_x"})
			if err != nil {
				t.Fatal(err)
			}
			if s.Status != Running || s.ID.TypeOf() != LocalBash {
				t.Errorf("StartShell = %s %q; want running local_bash", s.Status, s.ID)
			}
			e := nextEvent(t, sub, EventTerminated)
			sh := e.State.Detail.(*Shell)
			if e.State.Status != tt.status || sh.ExitCode != tt.code || !sh.Exited {
				t.Errorf("ended %s with code %d; want %s, %d", e.State.Status, sh.ExitCode, tt.status, tt.code)
			}
			if !strings.Contains(e.Notification, tt.summary) || !strings.Contains(e.Notification, "<tool-use-id>toolu_x</tool-use-id>") {
				t.Errorf("notification = %q; want %q in it", e.Notification, tt.summary)
			}
			if tt.code != 137 {
				b, _ := os.ReadFile(s.OutputFile)
				if !strings.HasPrefix(string(b), "hello\n") {
					t.Errorf("output = %q; want hello first", b)
				}
			}
		})
	}
}

// TestShellOutputCap: a shell writing 4 MB through a 256 KiB cap runs to
// its end, its file keeps the end (the last line, which says how it
// ended), and its notification shows that end, NUL bytes dropped.
func TestShellOutputCap(t *testing.T) {
	dir := t.TempDir()
	canPunch(t, dir)
	r := shellRegistry(t, Config{Dir: dir, MaxOutput: 256 << 10})
	sub := r.Subscribe()
	s, err := r.StartShell(ShellSpec{Command: "head -c 4000000 /dev/zero; echo; echo done-marker >&2; exit 0"})
	if err != nil {
		t.Fatal(err)
	}
	e := nextEvent(t, sub, EventTerminated)
	if e.State.Status != Completed {
		t.Errorf("status %s; want completed (the cap does not kill)", e.State.Status)
	}
	if a := allocated(t, s.OutputFile); a > 256<<10+2*punchAlign {
		t.Errorf("the output holds %d bytes of disk; want about the 256 KiB cap", a)
	}
	tail, err := ReadOutputTail(s.OutputFile, 1, 100)
	if err != nil || string(tail.Data) != "done-marker\n" || tail.Size != 4000000+1+12 {
		t.Errorf("tail = %q of %d, %v; want the last line of every byte", tail.Data, tail.Size, err)
	}
	if !strings.Contains(e.Notification, "<output-tail>…\ndone-marker</output-tail>") || strings.ContainsRune(e.Notification, 0) {
		t.Errorf("notification = %q; want the output's end, without NULs", e.Notification)
	}
}

func TestShellSymlinkRefused(t *testing.T) {
	dir := t.TempDir()
	r := shellRegistry(t, Config{Dir: dir})
	target := dir + "/victim"
	os.WriteFile(target, []byte("precious"), 0o644)
	id := NewID(LocalBash)
	os.Symlink(target, OutputPath(dir, id))
	sub := r.Subscribe()
	s, err := r.StartShell(ShellSpec{ID: id, Command: "echo pwned", Description: "x"})
	if !errors.Is(err, ErrSymlink) {
		t.Fatalf("StartShell over a symlink = %v; want ErrSymlink", err)
	}
	if s.Status != Failed || !s.Notified {
		t.Errorf("task %s notified=%v; want failed and notified", s.Status, s.Notified)
	}
	e := nextEvent(t, sub, EventTerminated)
	if !strings.Contains(e.Notification, "<status>failed</status>") {
		t.Errorf("notification = %q; want a failure", e.Notification)
	}
	if b, _ := os.ReadFile(target); string(b) != "precious" {
		t.Errorf("target = %q; want untouched", b)
	}
}

func TestShellStopWithout137(t *testing.T) {
	r := shellRegistry(t, Config{})
	sub := r.Subscribe()
	s, _ := r.StartShell(ShellSpec{Command: "sleep 300", Description: "sleeper"})
	got, err := r.Stop(t.Context(), s.ID)
	if err != nil || got.Status != Killed || !got.Notified {
		t.Fatalf("Stop = %s notified=%v, %v; want killed and notified", got.Status, got.Notified, err)
	}
	// Let the waiter see the exit and try to report it.
	waitFor(t, "the exit code", func() bool {
		now, _ := r.Get(s.ID)
		return now.Detail.(*Shell).Exited
	})
	time.Sleep(100 * time.Millisecond)
	es := drain(sub)
	if n := countKind(es, EventTerminated); n != 1 {
		t.Errorf("%d task_terminated events; want 1", n)
	}
	for _, e := range es {
		if strings.Contains(e.Notification, "137") || (e.Kind == EventTerminated && e.Notification != "") {
			t.Errorf("stop produced a model notification: %q", e.Notification)
		}
	}
	if now, _ := r.Get(s.ID); now.Status != Killed {
		t.Errorf("status %s; want killed", now.Status)
	}
	if _, err := r.Stop(t.Context(), s.ID); !errors.Is(err, ErrNotRunning) {
		t.Errorf("second Stop = %v; want ErrNotRunning", err)
	}
}

// groupMembers returns the live (non-zombie) processes of group pgid, from
// /proc.
func groupMembers(t *testing.T, pgid int) int {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			n++
		}
	}
	return n
}

func TestKillForAgent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	r := shellRegistry(t, Config{})
	mine1, _ := r.StartShell(ShellSpec{Command: "sleep 300 & sleep 300 & wait", AgentID: "worker@t"})
	mine2, _ := r.StartShell(ShellSpec{Command: "sleep 300", AgentID: "worker@t"})
	other, _ := r.StartShell(ShellSpec{Command: "sleep 300", AgentID: "other@t"})
	pgid := mine1.Detail.(*Shell).PID
	waitFor(t, "3 processes in the group", func() bool { return groupMembers(t, pgid) == 3 })

	ids := r.KillForAgent(t.Context(), "worker@t")
	if len(ids) != 2 {
		t.Errorf("KillForAgent = %v; want 2 tasks", ids)
	}
	for _, s := range []State{mine1, mine2} {
		g := s.Detail.(*Shell).PID
		if n := groupMembers(t, g); n != 0 {
			t.Errorf("group %d: %d live processes after KillForAgent; want 0", g, n)
		}
		// Zombies of the killed sleeps wait for PID 1 to reap them (slow in
		// some containers); after that the group must be gone entirely.
		waitFor(t, "the group to be reaped", func() bool {
			return errors.Is(syscall.Kill(-g, 0), syscall.ESRCH)
		})
		if now, _ := r.Get(s.ID); now.Status != Killed {
			t.Errorf("task %s: %s; want killed", s.ID, now.Status)
		}
	}
	if now, _ := r.Get(other.ID); now.Status != Running {
		t.Errorf("another agent's shell: %s; want running", now.Status)
	}
	if err := syscall.Kill(other.Detail.(*Shell).PID, 0); err != nil {
		t.Errorf("another agent's shell is gone: %v", err)
	}
}

func TestShellStallWatchdog(t *testing.T) {
	clock := newFakeClock()
	r := shellRegistry(t, Config{Clock: clock})
	sub := r.Subscribe()
	quiet, _ := r.StartShell(ShellSpec{Command: "echo working; sleep 300", Description: "busy"})
	s, _ := r.StartShell(ShellSpec{Command: "printf 'Overwrite existing file? (y/n) '; sleep 300", Description: "asker"})
	waitFor(t, "the prompt", func() bool {
		b, _ := os.ReadFile(s.OutputFile)
		q, _ := os.ReadFile(quiet.OutputFile)
		return strings.HasSuffix(string(b), "(y/n) ") && len(q) > 0
	})
	// Advance one 5 s tick at a time, giving the watchdog a moment to look.
	var stalled []Event
	for i := 0; i < 30; i++ {
		clock.Advance(DefaultStallInterval)
		time.Sleep(20 * time.Millisecond)
		for _, e := range drain(sub) {
			if e.Kind == EventStalled {
				if fake := clock.Now().Sub(s.Start); fake < DefaultStallAfter {
					t.Errorf("stall reported after %v; want >= %v", fake, DefaultStallAfter)
				}
				stalled = append(stalled, e)
			}
		}
	}
	if len(stalled) != 1 {
		t.Fatalf("%d task_stalled events; want exactly 1", len(stalled))
	}
	e := stalled[0]
	if e.State.ID != s.ID || !strings.Contains(e.Notification, "(y/n)") || !strings.Contains(e.Notification, "waiting for interactive input") {
		t.Errorf("stall event for %s: %q", e.State.ID, e.Notification)
	}
	if now, _ := r.Get(s.ID); !now.Detail.(*Shell).Stalled || now.Status != Running {
		t.Errorf("task after the stall: %s stalled=%v; want running, stalled", now.Status, now.Detail.(*Shell).Stalled)
	}
}

func TestNoGoroutineLeakAfterClose(t *testing.T) {
	before := runtime.NumGoroutine()
	r := New(Config{Dir: t.TempDir(), Clock: newFakeClock()})
	sub := r.Subscribe()
	for range 5 {
		if _, err := r.StartShell(ShellSpec{Command: "sleep 300"}); err != nil {
			t.Fatal(err)
		}
	}
	r.StartShell(ShellSpec{Command: "true"})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, s := range r.List() {
		if s.Status.Active() {
			t.Errorf("task %s %s after Close; want terminal", s.ID, s.Status)
		}
		if g := s.Detail.(*Shell).PID; groupMembers(t, g) != 0 {
			t.Errorf("group %d survived Close", g)
		}
	}
	sub.Close()
	waitFor(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
	if _, err := r.StartShell(ShellSpec{Command: "true"}); !errors.Is(err, ErrClosed) {
		t.Errorf("StartShell after Close = %v; want ErrClosed", err)
	}
}

// TestEvictionRemovesOutput: a finished shell's output file stays through
// the grace period after its notification, on the registry's clock, and
// goes with the task once it passed; the registry still tells what the
// task was.
func TestEvictionRemovesOutput(t *testing.T) {
	clock := newFakeClock()
	r := shellRegistry(t, Config{Clock: clock, Grace: 30 * time.Second})
	sub := r.Subscribe()
	s, err := r.StartShell(ShellSpec{Command: "seq 1 100", Description: "count"})
	if err != nil {
		t.Fatal(err)
	}
	e := nextEvent(t, sub, EventTerminated)
	if !strings.Contains(e.Notification, "<output-tail>…\n81\n82\n") || !strings.Contains(e.Notification, "\n100</output-tail>") {
		t.Errorf("notification = %q; want the last 20 lines", e.Notification)
	}
	clock.Advance(29 * time.Second)
	if rep, _ := r.Poll(t.Context()); len(rep.Evicted) != 0 {
		t.Fatalf("evicted %v before the grace period passed", rep.Evicted)
	}
	if _, err := os.Stat(s.OutputFile); err != nil {
		t.Fatalf("output file within the grace period: %v", err)
	}
	clock.Advance(time.Second)
	rep, err := r.Poll(t.Context())
	if err != nil || !slices.Equal(rep.Evicted, []ID{s.ID}) {
		t.Fatalf("Poll = %v, %v; want %s evicted", rep.Evicted, err, s.ID)
	}
	if _, err := os.Stat(s.OutputFile); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("output file after eviction: %v; want it removed", err)
	}
	if _, ok := r.Get(s.ID); ok {
		t.Error("Get after eviction found the task")
	}
	if got, ok := r.Evicted(s.ID); !ok || got.Status != Completed || got.Description != "count" {
		t.Errorf("Evicted = %+v, %v; want the completed task", got, ok)
	}
}
