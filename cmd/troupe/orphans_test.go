//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/proctest"
)

// orphanScript is a lead that creates a team and spawns worker, and a
// worker whose Bash call leaves a background child (its pid written to
// child) and waits for it: a command that outlives its agent unless
// someone kills its group. then is the lead's reply to a later input.
func orphanScript(t *testing.T, dir, child string, then map[string]any) string {
	t.Helper()
	turns := []map[string]any{
		{"match": map[string]any{"system": "You are troupe,", "turn": 0}, "reply": map[string]any{"tool_calls": []map[string]any{
			{"name": "TeamCreate", "input": map[string]string{"team_name": "orphans"}},
			{"name": "Agent", "input": map[string]string{"description": "worker", "name": "worker", "prompt": "run the long command"}}}}},
		{"match": map[string]any{"system": "You are troupe,", "tool_result": "Agent"}, "reply": map[string]any{"text": "waiting"}},
	}
	if then != nil {
		turns = append(turns, then)
	}
	turns = append(turns,
		map[string]any{"match": map[string]any{"system": "You are troupe,"}, "reply": map[string]any{"text": "noted"}, "repeat": true},
		map[string]any{"match": map[string]any{"system": "teammate worker", "turn": 0}, "reply": map[string]any{"tool_calls": []map[string]any{
			{"name": "Bash", "input": map[string]string{"command": "sleep 300 & echo $! > " + child + "; wait"}}}}},
		map[string]any{"match": map[string]any{"system": "teammate worker"}, "reply": map[string]any{"text": "done", "delay_ms": 120000}, "repeat": true},
	)
	b, err := json.Marshal(map[string]any{"turns": turns})
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, string(b))
	return script
}

// startLead starts the troupe binary as a headless lead on script.
func startLead(t *testing.T, sock, home, cwd, script string, extra ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	args := append([]string{"-p", "--agent-teams", "--home", home, "--provider", "scripted", "--script", script, "--cwd", cwd,
		"--permission-mode", "bypassPermissions", "--output-format", "stream-json"}, extra...)
	c := exec.Command(os.Args[0], append(args, "go")...)
	c.Env = troupeEnv(t, sock)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	return c, &stdout, &stderr
}

// waitChild returns the pid of the worker's background child, killed at
// the end of the test whatever happens.
func waitChild(t *testing.T, child string, stdout, stderr *bytes.Buffer) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(child); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker's command did not start\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
		}
	}
	pid := proctest.PID(t, child)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// A pane teammate SIGKILLed in the middle of a Bash call: the lead kills
// what the call left running before it reports the death (and releases
// the teammate's tasks).
func TestKilledTeammateLeavesNoProcess(t *testing.T) {
	needTmux(t)
	sock := tmuxSocket(t)
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	child := filepath.Join(dir, "child")
	script := orphanScript(t, dir, child, map[string]any{"match": map[string]any{"system": "You are troupe,", "user": "died unexpectedly"},
		"reply": map[string]any{"tool_calls": []map[string]any{{"name": "TeamDelete", "input": map[string]any{}}}}})
	c, stdout, stderr := startLead(t, sock, home, cwd, script, "--teammate-mode", "tmux")
	pid := waitChild(t, child, stdout, stderr)
	mates := liveTeammates(sock)
	if len(mates) != 1 {
		t.Fatalf("teammates running: %v; want one", mates)
	}
	if err := syscall.Kill(mates[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err != nil {
		t.Fatalf("the lead failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	if !strings.Contains(stdout.String(), "worker died") {
		t.Fatalf("the lead was not told of the death:\n%s", stdout)
	}
	if proctest.Alive(pid) {
		t.Errorf("the dead teammate's command %d still runs after its lead reported the death\nstderr:\n%s", pid, stderr)
	}
	if !strings.Contains(stderr.String(), "killed 1 process group(s) left by worker@orphans") {
		t.Errorf("the lead's stderr does not say what it killed:\n%s", stderr)
	}
}

// SIGINT or SIGTERM to a lead with tmux teammates ends them and what their
// commands started.
func TestInterruptedLeadLeavesNoProcess(t *testing.T) {
	needTmux(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			sock := tmuxSocket(t)
			dir := t.TempDir()
			home, cwd := homeAndWork(t, dir)
			child := filepath.Join(dir, "child")
			c, stdout, stderr := startLead(t, sock, home, cwd, orphanScript(t, dir, child, nil), "--teammate-mode", "tmux")
			pid := waitChild(t, child, stdout, stderr)
			mates := liveTeammates(sock)
			if err := c.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			_ = c.Wait() // its exit status is the signals' own business
			if proctest.Alive(pid) {
				t.Errorf("the teammate's command %d still runs after its lead ended\nstderr:\n%s", pid, stderr)
			}
			for _, m := range mates {
				if proctest.Alive(m) {
					t.Errorf("the teammate %d still runs after its lead ended", m)
				}
			}
		})
	}
}

// A lead SIGKILLed while its in-process teammate's command runs: the
// command outlives both (nobody is left to kill it), until the session is
// resumed, which kills it first.
func TestResumedLeadKillsWhatTheDeadLeadLeft(t *testing.T) {
	sock := tmuxSocket(t) // unused: in-process teammates
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	child := filepath.Join(dir, "child")
	script := orphanScript(t, dir, child, nil)
	c, stdout, stderr := startLead(t, sock, home, cwd, script, "--teammate-mode", "in-process")
	pid := waitChild(t, child, stdout, stderr)
	if err := c.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = c.Wait()
	if !proctest.Alive(pid) {
		t.Fatal("the command ended with its lead: the test proves nothing")
	}
	again, stdout, stderr := startLead(t, sock, home, cwd, script, "--continue")
	if err := again.Wait(); err != nil {
		t.Fatalf("the resumed lead failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	if !proctest.WaitGone(pid, 5*time.Second) {
		t.Errorf("the dead lead's command %d still runs after the session was resumed\nstderr:\n%s", pid, stderr)
	}
	if !strings.Contains(stderr.String(), "killed 1 process group(s) left by a lead") {
		t.Errorf("the resumed lead's stderr does not say what it killed:\n%s", stderr)
	}
}
