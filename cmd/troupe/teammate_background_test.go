package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/atomicfile"
	"github.com/troupe-dev/troupe/internal/proctest"
)

// A headless run whose teammate starts a background command waits for
// it: the command runs to its end (it is not killed when the lead's own
// work is done), its end wakes the idle teammate, and the teammate's
// report reaches the lead before the run ends.
func TestHeadlessWaitsForTeammateBackgroundTask(t *testing.T) {
	dir := t.TempDir()
	home, cwd := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	writeIn(t, filepath.Join(cwd, "README"), "x\n")
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"builders"}},
   {"name":"Agent","input":{"description":"builder","name":"bo","prompt":"start the build"}}]}},
 {"match":{"system":"teammate bo","turn":0},"reply":{"tool_calls":[{"name":"Bash","input":{
   "command":"sleep 1; echo BUILD-OK > built.txt; echo BUILD-LOG-LAST-LINE","description":"build","run_in_background":true}}]}},
 {"match":{"system":"teammate bo","user":"task-notification"},"reply":{"text":"REPORT: the build finished"}},
 {"match":{"system":"teammate bo"},"reply":{"text":"started the build in the background"},"repeat":true},
 {"match":{"system":"You are troupe,","user":"REPORT: the build finished"},"reply":{"text":"LEAD-SAW-REPORT"}},
 {"match":{"system":"You are troupe,"},"reply":{"text":"waiting"},"repeat":true}
]}`)
	out, errOut, err := runIn(t, home, "-p", "--trust", "--agent-teams", "--explicit-teams", "--teammate-mode", "in-process", "--cwd", cwd,
		"--permission-mode", "bypassPermissions", "--provider", "scripted", "--script", script, "--output-format", "json", "go")
	if err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, out, errOut)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("result: %v\n%s", err, out)
	}
	if res["result"] != "LEAD-SAW-REPORT" {
		t.Errorf("the lead's last answer = %v; want LEAD-SAW-REPORT (the teammate's report after its background task)\n%s", res["result"], errOut)
	}
	if b, err := os.ReadFile(filepath.Join(cwd, "built.txt")); err != nil || strings.TrimSpace(string(b)) != "BUILD-OK" {
		t.Errorf("built.txt: %q, %v; want the background command to have run to its end", b, err)
	}
}

// Interrupted (Ctrl-C) while a teammate's background task runs, a
// headless run stops the task (no orphan) and says which it stopped.
func TestHeadlessInterruptStopsTeammateBackgroundTask(t *testing.T) {
	dir := t.TempDir()
	home, cwd := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	writeIn(t, filepath.Join(cwd, "README"), "x\n")
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"watchers"}},
   {"name":"Agent","input":{"description":"watcher","name":"bo","prompt":"watch"}}]}},
 {"match":{"system":"teammate bo","turn":0},"reply":{"tool_calls":[{"name":"Bash","input":{
   "command":"echo $$ > watch.pid; while [ ! -e never ]; do sleep 0.05; done","description":"watch forever","run_in_background":true}}]}},
 {"match":{"system":"teammate bo"},"reply":{"text":"watching"},"repeat":true},
 {"match":{"system":"You are troupe,"},"reply":{"text":"waiting"},"repeat":true}
]}`)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errOut := newSyncBuffer()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		m := &Main{Stdout: &out, Stderr: errOut, Getenv: func(string) string { return "" }, NewID: func() string { return "session-1" }}
		done <- m.Run(ctx, []string{"--home", home, "-p", "--trust", "--agent-teams", "--explicit-teams", "--teammate-mode", "in-process", "--cwd", cwd,
			"--permission-mode", "bypassPermissions", "--provider", "scripted", "--script", script, "go"})
	}()
	errOut.waitFor(t, "bo idle", func(s string) bool { return strings.Contains(s, "bo is idle") })
	pid := proctest.PID(t, filepath.Join(cwd, "watch.pid"))
	select {
	case err := <-done:
		t.Fatalf("the run ended (%v) while bo's background task runs\n%s", err, errOut.String())
	default:
	}
	cancel()
	<-done
	if !proctest.WaitGone(pid, 5*time.Second) {
		t.Errorf("bo's background command (pid %d) outlived the run", pid)
	}
	if s := errOut.String(); !strings.Contains(s, `stopped its background task b`) || !strings.Contains(s, `("watch forever") as it ended`) {
		t.Errorf("the timeline does not say which background task was stopped:\n%s", s)
	}
}

// With the disk full as a teammate sends its idle notification, the
// notification is not dropped: the failure is on the timeline while it
// lasts, and once there is room the report reaches the lead, which acts
// on it.
func TestHeadlessIdleNotificationSurvivesFullDisk(t *testing.T) {
	dir := t.TempDir()
	home, cwd := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	writeIn(t, filepath.Join(cwd, "README"), "x\n")
	var refused atomic.Int32
	fault := func(path string) error {
		if strings.HasPrefix(path, home) && strings.HasSuffix(path, filepath.Join("inboxes", "team-lead.json")) && refused.Add(1) <= 3 {
			return syscall.ENOSPC
		}
		return nil
	}
	if !atomicfile.WriteFault.CompareAndSwap(nil, &fault) {
		t.Fatal("another test holds atomicfile.WriteFault")
	}
	defer atomicfile.WriteFault.Store(nil)
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"full"}},
   {"name":"Agent","input":{"description":"reporter","name":"bo","prompt":"report"}}]}},
 {"match":{"system":"teammate bo"},"reply":{"text":"REPORT-THROUGH-A-FULL-DISK"},"repeat":true},
 {"match":{"system":"You are troupe,","user":"REPORT-THROUGH-A-FULL-DISK"},"reply":{"text":"LEAD-SAW-REPORT"}},
 {"match":{"system":"You are troupe,"},"reply":{"text":"waiting"},"repeat":true}
]}`)
	out, errOut, err := runIn(t, home, "-p", "--trust", "--agent-teams", "--explicit-teams", "--teammate-mode", "in-process", "--cwd", cwd,
		"--permission-mode", "bypassPermissions", "--provider", "scripted", "--script", script, "--output-format", "json", "go")
	if err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, out, errOut)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("result: %v\n%s", err, out)
	}
	if res["result"] != "LEAD-SAW-REPORT" {
		t.Errorf("the lead's last answer = %v; want LEAD-SAW-REPORT (bo's report, delivered once there was room)\n%s", res["result"], errOut)
	}
	if !strings.Contains(errOut, "disk full: the idle_notification to team-lead is not delivered yet") ||
		!strings.Contains(errOut, "disk has room again: the idle_notification to team-lead delivered after 4 tries") {
		t.Errorf("the timeline does not show the full disk and its end:\n%s", errOut)
	}
}

// Interrupted while its own background task runs, a headless lead stops
// it and says so on stderr.
func TestHeadlessInterruptReportsLeadBackgroundTask(t *testing.T) {
	dir := t.TempDir()
	home, cwd := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	writeIn(t, filepath.Join(cwd, "README"), "x\n")
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"turn":0},"reply":{"tool_calls":[{"name":"Bash","input":{
   "command":"echo $$ > watch.pid; while [ ! -e never ]; do sleep 0.05; done","description":"watch forever","run_in_background":true}}]}},
 {"reply":{"text":"waiting"},"repeat":true}
]}`)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errOut := newSyncBuffer()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		m := &Main{Stdout: &out, Stderr: errOut, Getenv: func(string) string { return "" }, NewID: func() string { return "session-1" }}
		done <- m.Run(ctx, []string{"--home", home, "-p", "--trust", "--cwd", cwd,
			"--permission-mode", "bypassPermissions", "--provider", "scripted", "--script", script, "go"})
	}()
	pid := proctest.PID(t, filepath.Join(cwd, "watch.pid"))
	cancel()
	<-done
	if !proctest.WaitGone(pid, 5*time.Second) {
		t.Errorf("the background command (pid %d) outlived the run", pid)
	}
	if s := errOut.String(); !strings.Contains(s, `troupe: stopping background task b`) || !strings.Contains(s, `(local_bash "watch forever"): the run ended before it did`) {
		t.Errorf("stderr does not say which background task was stopped:\n%s", s)
	}
}
