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
	args := append([]string{"-p", "--agent-teams", "--explicit-teams", "--home", home, "--provider", "scripted", "--script", script, "--cwd", cwd,
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

// claimScript is orphanScript's team with a task: the lead creates task
// #1 and spawns worker, which takes it and runs the long command.
func claimScript(t *testing.T, dir, child string) string {
	t.Helper()
	turns := []map[string]any{
		{"match": map[string]any{"system": "You are troupe,", "turn": 0}, "reply": map[string]any{"tool_calls": []map[string]any{
			{"name": "TeamCreate", "input": map[string]string{"team_name": "orphans"}},
			{"name": "TaskCreate", "input": map[string]string{"subject": "long job", "description": "run it"}},
			{"name": "Agent", "input": map[string]string{"description": "worker", "name": "worker", "prompt": "take task 1"}}}}},
		{"match": map[string]any{"system": "You are troupe,"}, "reply": map[string]any{"text": "noted"}, "repeat": true},
		{"match": map[string]any{"system": "teammate worker", "turn": 0}, "reply": map[string]any{"tool_calls": []map[string]any{
			{"name": "TaskUpdate", "input": map[string]string{"taskId": "1", "owner": "worker", "status": "in_progress"}}}}},
		{"match": map[string]any{"system": "teammate worker", "tool_result": "TaskUpdate"}, "reply": map[string]any{"tool_calls": []map[string]any{
			{"name": "Bash", "input": map[string]string{"command": "sleep 300 & echo $! > " + child + "; wait"}}}}},
		{"match": map[string]any{"system": "teammate worker"}, "reply": map[string]any{"text": "done", "delay_ms": 120000}, "repeat": true},
	}
	b, err := json.Marshal(map[string]any{"turns": turns})
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, string(b))
	return script
}

// A lead SIGKILLed while its tmux teammate works on a task comes back
// (--continue) as the lead of its team: it stops the old teammate and
// what it runs, releases its task, sees the task list, and can delete the
// team.
func TestResumedLeadFindsItsTeam(t *testing.T) {
	needTmux(t)
	sock := tmuxSocket(t)
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	child := filepath.Join(dir, "child")
	t.Setenv(EnvLeadGoneAfter, "1h") // the old teammate waits for the resumed lead
	c, stdout, stderr := startLead(t, sock, home, cwd, claimScript(t, dir, child), "--teammate-mode", "tmux")
	pid := waitChild(t, child, stdout, stderr)
	mates := liveTeammates(sock)
	if len(mates) != 1 {
		t.Fatalf("teammates running: %v; want one", mates)
	}
	_ = c.Process.Kill()
	_ = c.Wait()
	if !proctest.Alive(mates[0]) || !proctest.Alive(pid) {
		t.Fatal("the teammate or its command ended with the lead: the test proves nothing")
	}
	resume := filepath.Join(dir, "resume.json")
	writeFile(t, resume, `{"turns":[
 {"match":{"system":"You are troupe,","user":"You are again the lead of team"},"reply":{"tool_calls":[{"name":"TaskList","input":{}}]}},
 {"match":{"system":"You are troupe,","tool_result":"TaskList"},"reply":{"tool_calls":[{"name":"TeamDelete","input":{}}]}},
 {"match":{"system":"You are troupe,","tool_result":"TeamDelete"},"reply":{"text":"RESUMED-CLEANUP"}},
 {"match":{"system":"You are troupe,"},"reply":{"text":"noted"},"repeat":true}
]}`)
	again, stdout, stderr := startLead(t, sock, home, cwd, resume, "--continue", "--teammate-mode", "tmux")
	if err := again.Wait(); err != nil {
		t.Fatalf("the resumed lead failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	out := stdout.String()
	for _, want := range []string{`long job`, `RESUMED-CLEANUP`, `deleted team`} {
		if !strings.Contains(out, want) {
			t.Errorf("the resumed lead's stream lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not in a team yet") {
		t.Errorf("the resumed lead did not find its team:\n%s", out)
	}
	if !strings.Contains(stderr.String(), `resumed as the lead of team "orphans" (dead: 0, stopped: 1, tasks released: 1)`) {
		t.Errorf("the resumed lead's stderr does not report the re-attach:\n%s", stderr)
	}
	if !proctest.WaitGone(mates[0], 5*time.Second) || !proctest.WaitGone(pid, 5*time.Second) {
		t.Errorf("the old teammate (%v) or its command (%v) still runs", proctest.Alive(mates[0]), proctest.Alive(pid))
	}
	if _, err := os.Stat(filepath.Join(home, "teams", "orphans")); !os.IsNotExist(err) {
		t.Errorf("the team is still there: %v", err)
	}
}

// A pane teammate whose lead was SIGKILLed notices within the grace it is
// given, stops its command, releases its task, tells the lead's inbox and
// exits; `troupe team delete --force` then removes the team.
func TestTeammateOfAGoneLeadLeaves(t *testing.T) {
	needTmux(t)
	sock := tmuxSocket(t)
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	child := filepath.Join(dir, "child")
	t.Setenv(EnvLeadGoneAfter, "1s")
	c, stdout, stderr := startLead(t, sock, home, cwd, claimScript(t, dir, child), "--teammate-mode", "tmux")
	pid := waitChild(t, child, stdout, stderr)
	mates := liveTeammates(sock)
	if len(mates) != 1 {
		t.Fatalf("teammates running: %v; want one", mates)
	}
	_ = c.Process.Kill()
	_ = c.Wait()
	if !proctest.WaitGone(mates[0], 30*time.Second) {
		t.Fatal("the teammate still runs 30 s after its lead was killed")
	}
	if proctest.Alive(pid) {
		t.Error("the teammate's command outlived it")
	}
	// Its pane closed, the dead lead's dedicated tmux server ends.
	for deadline := time.Now().Add(5 * time.Second); exec.Command("tmux", "-L", sock, "has-session").Run() == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			out, _ := exec.Command("tmux", "-L", sock, "list-panes", "-a", "-F", "#{pane_id} #{pane_dead}").CombinedOutput()
			t.Fatalf("the dead lead's tmux server still runs 5 s after its teammate left:\n%s", out)
		}
	}
	run := func(args ...string) string {
		var out bytes.Buffer
		m := &Main{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }}
		if err := m.Run(t.Context(), append([]string{"--home", home}, args...)); err != nil {
			t.Fatalf("troupe %v: %v\n%s", args, err, out.String())
		}
		return out.String()
	}
	if tasks := run("task", "list", "--team", "orphans"); !strings.Contains(tasks, "pending") || strings.Contains(tasks, "worker") {
		t.Errorf("the gone lead's teammate's task was not released:\n%s", tasks)
	}
	if inbox := run("inbox", "read", "--team", "orphans", "--agent", "team-lead"); !strings.Contains(inbox, "Teammate worker stopped: its lead") {
		t.Errorf("the lead's inbox lacks the teammate's note:\n%s", inbox)
	}
	if log, _ := os.ReadFile(filepath.Join(home, "logs", "orphans", "worker.log")); !strings.Contains(string(log), "released 1 task(s)") {
		t.Errorf("the teammate's log lacks its note:\n%s", log)
	}
	run("team", "delete", "--force", "orphans")
	if _, err := os.Stat(filepath.Join(home, "teams", "orphans")); !os.IsNotExist(err) {
		t.Errorf("the team is still there after delete --force: %v", err)
	}
}

// `troupe team delete --force` refuses while the team's lead runs; once
// the lead is SIGKILLed it stops the teammate still running and its
// command, then removes the team.
func TestForceDeleteStopsATeamWhoseLeadIsGone(t *testing.T) {
	needTmux(t)
	sock := tmuxSocket(t)
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	child := filepath.Join(dir, "child")
	t.Setenv(EnvLeadGoneAfter, "1h")
	c, stdout, stderr := startLead(t, sock, home, cwd, claimScript(t, dir, child), "--teammate-mode", "tmux")
	pid := waitChild(t, child, stdout, stderr)
	mates := liveTeammates(sock)
	if len(mates) != 1 {
		t.Fatalf("teammates running: %v; want one", mates)
	}
	del := func() (string, error) {
		var out bytes.Buffer
		m := &Main{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }}
		err := m.Run(t.Context(), []string{"--home", home, "team", "delete", "--force", "orphans"})
		return out.String(), err
	}
	if out, err := del(); err == nil || !strings.Contains(err.Error(), "its lead still runs") {
		t.Fatalf("delete --force with the lead running = %v\n%s; want a refusal", err, out)
	}
	_ = c.Process.Kill()
	_ = c.Wait()
	out, err := del()
	if err != nil {
		t.Fatalf("delete --force: %v\n%s", err, out)
	}
	if !proctest.WaitGone(mates[0], 5*time.Second) || !proctest.WaitGone(pid, 5*time.Second) {
		t.Errorf("after delete --force the teammate (%v) or its command (%v) still runs\n%s", proctest.Alive(mates[0]), proctest.Alive(pid), out)
	}
	if !strings.Contains(out, "stopped worker@orphans") {
		t.Errorf("delete --force does not say what it stopped:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(home, "teams", "orphans")); !os.IsNotExist(err) {
		t.Errorf("the team is still there after delete --force: %v", err)
	}
}
