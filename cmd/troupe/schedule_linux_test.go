//go:build linux

package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A lead SIGKILLed while its cron job waits: --continue restores the job
// from the session record (CronList shows it with its id, CronDelete
// finds it), and the resumed run ends once nothing is scheduled.
func TestResumeAfterKillKeepsCronJob(t *testing.T) {
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"user":"watch CI"},"reply":{"tool_calls":[{"name":"CronCreate","input":{"cron":"0 3 * * *","prompt":"check the nightly build"}}]}},
 {"match":{"tool_result":"CronCreate"},"reply":{"text":"scheduled"}},
 {"match":{"user":"what is scheduled"},"reply":{"tool_calls":[{"name":"CronList","input":{}}]}},
 {"match":{"tool_result":"CronList","user":"check the nightly build"},"reply":{"tool_calls":[{"name":"CronDelete","input":{"id":"{{capture:([0-9a-f]{8})  0 3}}"}}]}},
 {"match":{"tool_result":"CronDelete","user":"Deleted job"},"reply":{"text":"deleted the restored job"}}
]}`)
	run := func(extra ...string) (*exec.Cmd, *syncBuffer, *syncBuffer) {
		args := append([]string{"-p", "--home", home, "--provider", "scripted", "--script", script, "--cwd", cwd, "--output-format", "stream-json"}, extra...)
		c := exec.Command(os.Args[0], args...)
		c.Env = troupeEnv(t, "unused")
		stdout, stderr := newSyncBuffer(), newSyncBuffer()
		c.Stdout, c.Stderr = stdout, stderr
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill() })
		return c, stdout, stderr
	}
	first, stdout, stderr := run("watch CI")
	var record string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		paths, _ := filepath.Glob(filepath.Join(home, "sessions", "*.jsonl"))
		if len(paths) == 1 && recordedSchedule(t, paths[0]) != nil && strings.Contains(stdout.String(), `"scheduled"`) {
			record = paths[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no schedule recorded in 30 s\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
		}
	}
	// The job is pending (its next time is 03:00): the run stays up.
	time.Sleep(200 * time.Millisecond)
	if first.Process.Signal(syscall.Signal(0)) != nil {
		t.Fatalf("the run ended with a cron job pending\nstdout:\n%s", stdout)
	}
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	again, stdout, stderr := run("--continue", "what is scheduled")
	done := make(chan error, 1)
	go func() { done <- again.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the resumed run failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the resumed run did not end in 60 s\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if !strings.Contains(stderr.String(), "has 1 cron job(s) scheduled: this run stays up") {
		t.Errorf("the resumed run does not say it waits for the restored job\nstderr:\n%s", stderr)
	}
	if !strings.Contains(stdout.String(), "deleted the restored job") {
		t.Fatalf("the resumed lead did not find the job\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if st := recordedSchedule(t, record); st == nil || st["schedule"].(map[string]any)["jobs"] != nil {
		t.Errorf("last recorded schedule %v; want no jobs after the delete", st)
	}
}

// A headless run that waits for its cron job ends on SIGINT with exit
// status 130, as a run in its model call does.
func TestHeadlessScheduleSIGINT(t *testing.T) {
	work := t.TempDir()
	script := filepath.Join(work, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"user":"go"},"reply":{"tool_calls":[{"name":"CronCreate","input":{"cron":"0 3 * * *","prompt":"nightly"}}]}},
 {"match":{"tool_result":"CronCreate"},"reply":{"text":"WAITING-FOR-3AM"}}
]}`)
	c := exec.CommandContext(t.Context(), os.Args[0], "-p", "--trust", "--home", filepath.Join(work, "home"), "--cwd", work,
		"--provider", "scripted", "--script", script, "--output-format", "stream-json", "go")
	c.Env = append(os.Environ(), asTroupeEnv+"=1", "HOME="+work)
	stderr := newSyncBuffer()
	c.Stderr = stderr
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			c.Process.Kill()
			t.Fatalf("the run ended before its answer: %v\nstderr: %s", err, stderr)
		}
		if strings.Contains(line, `"type":"result"`) {
			c.Process.Kill()
			t.Fatalf("the run ended with a cron job pending: %s", line)
		}
		if strings.Contains(line, "WAITING-FOR-3AM") {
			break
		}
	}
	go func() { _, _ = r.WriteTo(new(bytes.Buffer)) }()
	if err := c.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, c); code != 130 {
		t.Errorf("exit status %d; want 130 (stderr %q)", code, stderr.String())
	}
}
