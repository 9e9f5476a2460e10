package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/permission/shell"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/team"

	"github.com/troupe-dev/troupe/llm/scripted"
)

// asTroupeEnv makes the test binary run as troupe (see TestMain), so that
// pane teammates need no separate build.
const asTroupeEnv = "TROUPE_CMD_AS_TROUPE"

// troupeEnv returns an environment in which the test binary is troupe for
// pane teammates, on a private tmux server, outside any tmux the tests
// run in.
func troupeEnv(t *testing.T, socket string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "TMUX" || k == "TMUX_PANE" || k == "TROUPE_HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, asTroupeEnv+"=1", EnvTeammateBin+"="+os.Args[0], "TROUPE_TMUX_SOCKET="+socket)
}

func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (.ci/run installs it)")
	}
}

// tmuxSocket returns a private tmux socket name, its server killed at the
// end of the test.
func tmuxSocket(t *testing.T) string {
	t.Helper()
	sock := fmt.Sprintf("troupe-test-%d-%d", os.Getpid(), time.Now().UnixNano()%1e9)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", sock, "kill-server").Run() })
	return sock
}

// The README's main job, in-process: the demo's team does its work and
// cleans up.
func TestDemoInProcess(t *testing.T) {
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &out}
	if err := m.Run(t.Context(), []string{"demo"}); err != nil {
		t.Fatalf("troupe demo: %v\n%s", err, out.String())
	}
	for _, want := range []string{"spawned alice", "asks to run Bash (go test", "allowed always (Bash(go test:*)",
		"→ everyone: Sub is in calc.go", "tasks completed        3", "shutdowns              3", demoLeadTools, "result                 ok"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, out.String())
		}
	}
	// One line per event: the lead's view, not the teammate's as well.
	for _, dup := range []string{"approved shutdown shutdown-", "shutting down", "alice exited", "alice      idle"} {
		if strings.Contains(out.String(), dup) {
			t.Errorf("the timeline shows an event twice (%q):\n%s", dup, out.String())
		}
	}
	if n := strings.Count(out.String(), "alice has shut down"); n != 1 {
		t.Errorf("alice's shutdown is on the timeline %d times, want once:\n%s", n, out.String())
	}
}

// demoLeadTools is the demo's summary of the lead's tool calls, the same
// in every backend.
const demoLeadTools = "lead's tool calls      Agent 3, SendMessage 3, TaskCreate 3, TaskUpdate 1, TeamCreate 1"

// Ctrl-C during the demo: it says it was interrupted, cleans up and exits
// 130, with no FAILED lines.
func TestDemoInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := &cancelOn{w: &bytes.Buffer{}, marker: "spawned carol", cancel: cancel}
	m := &Main{Stdout: out, Stderr: out}
	err := m.Run(ctx, []string{"demo", "--slow"})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 130 {
		t.Fatalf("an interrupted demo = %v, want exit 130\n%s", err, out.text())
	}
	if got := out.text(); !strings.Contains(got, "interrupted after") || strings.Contains(got, "FAILED") {
		t.Errorf("the interrupted demo's output:\n%s", got)
	}
}

// cancelOn is a writer that cancels a context once marker was written.
type cancelOn struct {
	mu     sync.Mutex
	w      *bytes.Buffer
	marker string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.w.Write(p)
	if strings.Contains(c.w.String(), c.marker) {
		c.cancel()
	}
	return n, err
}

func (c *cancelOn) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w.String()
}

// The same demo with the teammates as troupe processes in the panes of a
// private tmux server, which is gone afterwards.
func TestDemoTmux(t *testing.T) {
	needTmux(t)
	sock := tmuxSocket(t)
	c := exec.CommandContext(t.Context(), os.Args[0], "demo", "--teammate-mode", "tmux")
	c.Env = troupeEnv(t, sock)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("troupe demo --teammate-mode tmux: %v\n%s", err, out)
	}
	for _, want := range []string{"spawned alice (blue, tmux)", "watch them with: tmux -L " + sock + " attach -t ", "tasks completed        3", demoLeadTools, "result                 ok"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("the demo's output lacks %q:\n%s", want, out)
		}
	}
	if err := exec.Command("tmux", "-L", sock, "has-session").Run(); err == nil {
		t.Error("the demo left its tmux server running")
	}
}

// A teammate process killed with SIGKILL is detected, marked dead (not
// idle) and the lead told; the lead then deletes the team.
func TestPaneTeammateKilled(t *testing.T) {
	needTmux(t)
	sock := tmuxSocket(t)
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"doomed"}},
   {"name":"Agent","input":{"description":"sleeper","name":"sleeper","prompt":"work for a long time"}}]}},
 {"match":{"system":"You are troupe,","tool_result":"Agent"},"reply":{"text":"waiting"}},
 {"match":{"system":"You are troupe,","user":"died unexpectedly"},"reply":{"tool_calls":[{"name":"TeamDelete","input":{}}]}},
 {"match":{"system":"You are troupe,","tool_result":"TeamDelete"},"reply":{"text":"CLEANED-UP"}},
 {"match":{"system":"You are troupe,"},"reply":{"text":"noted"},"repeat":true},
 {"match":{"system":"teammate sleeper"},"reply":{"text":"done","delay_ms":120000},"repeat":true}
]}`)
	c := exec.CommandContext(t.Context(), os.Args[0], "-p", "--trust", "--agent-teams", "--explicit-teams", "--teammate-mode", "tmux", "--home", home,
		"--provider", "scripted", "--script", script, "--cwd", cwd, "--output-format", "stream-json", "go")
	c.Env = troupeEnv(t, sock)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the teammate's pane, then kill its process.
	var pid int
	deadline := time.Now().Add(30 * time.Second)
	for pid == 0 && time.Now().Before(deadline) {
		if pids := liveTeammates(sock); len(pids) > 0 {
			pid = pids[0]
		}
		time.Sleep(50 * time.Millisecond)
	}
	if pid == 0 {
		_ = c.Process.Kill()
		_ = c.Wait()
		t.Fatalf("no teammate pane appeared\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); !bytes.Contains(b, []byte("--lead-verify-key\x00")) {
		t.Errorf("the pane teammate was not given the lead's key: %q", b)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err != nil {
		t.Fatalf("the lead failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{`"kind":"dead"`, `sleeper died`, `CLEANED-UP`} {
		if !strings.Contains(out, want) {
			t.Errorf("the lead's stream lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, `"kind":"idle","text":"sleeper is idle`) {
		t.Error("the killed teammate was reported idle")
	}
}

// homeAndWork returns dir's home and work folders for a run, the work
// folder made.
func homeAndWork(t *testing.T, dir string) (home, work string) {
	t.Helper()
	home, work = filepath.Join(dir, "home"), filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	trustTemp(t, home) // main_test.go
	return home, work
}

// liveTeammates returns the pids of the troupe teammates running in the
// live panes of the tmux server sock.
func liveTeammates(sock string) []int {
	out, _ := exec.Command("tmux", "-L", sock, "list-panes", "-a", "-F", "#{pane_pid} #{pane_dead}").Output()
	var pids []int
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[1] == "0" {
			if p, err := strconv.Atoi(f[0]); err == nil && p > 0 && isTeammate(p) {
				pids = append(pids, p)
			}
		}
	}
	return pids
}

// isTeammate reports whether pid runs a troupe teammate (its command line
// has --agent-id).
func isTeammate(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && bytes.Contains(b, []byte("--agent-id"))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Permission bubbling end to end: an in-process teammate and a teammate in
// another process each ask the lead; the lead allows always (persisted to
// the settings file, applied to the whole team: the other teammate's
// identical kind of call is then allowed without asking) and then denies
// with feedback that the teammate's model sees.
func TestPermissionBubblingEndToEnd(t *testing.T) {
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"teammate inny","turn":0},"reply":{"tool_calls":[{"name":"Bash","input":{"command":"touch inny.txt"}}]}},
 {"match":{"system":"teammate inny","turn":1},"reply":{"tool_calls":[{"name":"Bash","input":{"command":"rm inny.txt"}}]}},
 {"match":{"system":"teammate inny","turn":2},"reply":{"text":"INNY-DONE"}},
 {"match":{"system":"teammate outy","turn":0},"reply":{"tool_calls":[{"name":"Bash","input":{"command":"mkdir outdir"}}]}},
 {"match":{"system":"teammate outy","turn":1},"reply":{"tool_calls":[{"name":"Bash","input":{"command":"touch outy.txt"}}]}},
 {"match":{"system":"teammate outy","turn":2},"reply":{"tool_calls":[{"name":"Bash","input":{"command":"rm -r outdir"}}]}},
 {"match":{"system":"teammate outy","turn":3},"reply":{"text":"OUTY-DONE"}}
]}`)
	s, err := scripted.Load(script)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var asked []string
	answer := func(ctx context.Context, q swarm.PermissionAsk) (swarm.PermissionAnswer, error) {
		var in struct{ Command string }
		_ = json.Unmarshal(q.Input, &in)
		mu.Lock()
		asked = append(asked, q.Worker+": "+in.Command)
		mu.Unlock()
		switch {
		case strings.HasPrefix(in.Command, "touch"):
			return swarm.PermissionAnswer{Allow: true, Always: true, Rule: "Bash(touch:*)"}, nil
		case strings.HasPrefix(in.Command, "mkdir"):
			return swarm.PermissionAnswer{Allow: true, Always: true, Rule: "Bash(mkdir:*)"}, nil
		}
		return swarm.PermissionAnswer{Allow: false, Message: "keep " + strings.Fields(in.Command)[len(strings.Fields(in.Command))-1]}, nil
	}
	events := make(chan swarm.Event, 256)
	a := newApp(Main{Stderr: os.Stderr})
	a.HomeFlag = home
	trustTemp(t, a.HomeFlag) // main_test.go
	base := &approve.Approver{Policy: permission.Policy{Shell: shell.Parse}, Cwd: cwd, Mode: permission.ModeDefault}
	lt, err := a.newLeadTeam(&headless{}, backend.ModeInProcess, kit.LeadTeamConfig{Session: "s-perm", Approver: base, Answer: answer,
		Mates: kit.InProcess{Cwd: cwd, Model: scripted.New(s), Approver: base}, Deliver: func(string) {},
		OnEvent: func(e swarm.Event) { t.Logf("%s %s %s", e.Agent, e.Kind, e.Text); events <- e }})
	if err != nil {
		t.Fatal(err)
	}
	defer lt.close()
	ctx := t.Context()
	cfg, err := lt.Lead.CreateTeam(ctx, "perms", "", "")
	if err != nil {
		t.Fatal(err)
	}
	waitEvent := func(what string, ok func(swarm.Event) bool) {
		t.Helper()
		timeout := time.After(60 * time.Second)
		for {
			select {
			case e := <-events:
				if ok(e) {
					return
				}
			case <-timeout:
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	if _, err := lt.Lead.Spawn(ctx, swarm.SpawnRequest{Name: "inny", Prompt: "go"}); err != nil {
		t.Fatal(err)
	}
	waitEvent("inny idle", func(e swarm.Event) bool { return e.Agent == "inny" && e.Kind == swarm.EventIdle })

	// outy joins as its own process, as a pane teammate would.
	active := true
	if _, err := team.AddMember(ctx, lt.Stores.Teams, cfg.Name, team.Member{Name: "outy", Cwd: cwd, IsActive: &active, BackendType: "tmux"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := lt.Stores.Mail.Send(ctx, cfg.Name, "outy", mailbox.Message{From: team.LeadName, Text: "go"}); err != nil {
		t.Fatal(err)
	}
	c := exec.CommandContext(ctx, os.Args[0], "--agent-id", "outy@"+cfg.Name, "--agent-name", "outy", "--team-name", cfg.Name,
		"--home", home, "--cwd", cwd, "--provider", "scripted", "--script", script, "--permission-mode", "default")
	c.Env = append(troupeEnv(t, "unused"), "HOME="+dir)
	var outErr bytes.Buffer
	c.Stdout, c.Stderr = &outErr, &outErr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Process.Kill(); _ = c.Wait() }()
	waitEvent("outy idle", func(e swarm.Event) bool { return e.Agent == "outy" && e.Kind == swarm.EventIdle })

	mu.Lock()
	got := append([]string(nil), asked...)
	mu.Unlock()
	want := []string{"inny: touch inny.txt", "inny: rm inny.txt", "outy: mkdir outdir", "outy: rm -r outdir"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the lead was asked %q, want %q (outy's touch allowed by inny's team rule)", got, want)
	}
	for _, f := range []string{"inny.txt", "outy.txt", "outdir"} {
		if _, err := os.Stat(filepath.Join(cwd, f)); err != nil {
			t.Errorf("%s: %v (allowed calls must have run, denied ones not)", f, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(cwd, ".troupe", "settings.local.json"))
	if err != nil || !bytes.Contains(b, []byte("Bash(touch:*)")) || !bytes.Contains(b, []byte("Bash(mkdir:*)")) {
		t.Errorf("the allow-always rules were not persisted: %v\n%s", err, b)
	}
	_ = c.Process.Kill()
	_ = c.Wait()
	if !strings.Contains(outErr.String(), "outy       asked the lead to allow Bash (rm -r outdir)") {
		t.Errorf("outy's timeline lacks its question:\n%s", outErr.String())
	}
}

func TestSettingsTeammateMode(t *testing.T) {
	dir := t.TempDir()
	user, local := filepath.Join(dir, "user.json"), filepath.Join(dir, "local.json")
	writeFile(t, user, `{"teammateMode":"tmux","permissions":{}}`)
	writeFile(t, local, `{"teammateMode":"in-process"}`)
	files := []settings.File{{Path: user}, {Path: filepath.Join(dir, "absent.json")}, {Path: local}}
	if got, err := settingsTeammateMode(files); err != nil || got != "in-process" {
		t.Errorf("settingsTeammateMode = %q, %v; want in-process (the later file wins)", got, err)
	}
	writeFile(t, local, `{"teammateMode":"screen"}`)
	if _, err := settingsTeammateMode(files); err == nil || !strings.Contains(err.Error(), local) {
		t.Errorf("a bad teammateMode: err = %v, want one naming %s", err, local)
	}
}

// A headless lead answers its teammates' questions with
// --permission-prompt-command, which may allow for the whole team
// ("always"); the rule is persisted.
func TestLeadPromptCommandAllowsAlways(t *testing.T) {
	dir := t.TempDir()
	cwd := filepath.Join(dir, "work")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"asks"}},
   {"name":"Agent","input":{"description":"toucher","name":"ann","prompt":"touch it"}}]}},
 {"match":{"system":"teammate ann","turn":0},"reply":{"tool_calls":[{"name":"Bash","input":{"command":"touch ann.txt"}}]}},
 {"match":{"system":"teammate ann"},"reply":{"text":"ANN-DONE"},"repeat":true},
 {"match":{"system":"You are troupe,"},"reply":{"text":"ok"},"repeat":true}
]}`)
	reqFile := filepath.Join(dir, "request.json")
	prompt := fmt.Sprintf(`cat > %s; echo '{"behavior":"allow","always":true,"rule":"Bash(touch:*)"}'`, reqFile)
	var out, errOut bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
	err := m.Run(t.Context(), []string{"-p", "--trust", "--agent-teams", "--explicit-teams", "--teammate-mode", "in-process", "--home", filepath.Join(dir, "home"),
		"--cwd", cwd, "--provider", "scripted", "--script", script, "--permission-prompt-command", prompt, "go"})
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), errOut.String())
	}
	if _, err := os.Stat(filepath.Join(cwd, "ann.txt")); err != nil {
		t.Errorf("the allowed call did not run: %v\n%s", err, errOut.String())
	}
	if b, err := os.ReadFile(reqFile); err != nil || !bytes.Contains(b, []byte(`"agent":"ann"`)) {
		t.Errorf("the prompt command's request does not name the teammate: %s %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(cwd, ".troupe", "settings.local.json")); err != nil || !bytes.Contains(b, []byte("Bash(touch:*)")) {
		t.Errorf("the team rule was not persisted: %s %v", b, err)
	}
	if !strings.Contains(errOut.String(), "allowed always (Bash(touch:*), for the whole team)") {
		t.Errorf("the timeline lacks the answer:\n%s", errOut.String())
	}
}

func TestTeamFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-p", "--trust", "--agent-teams", "--explicit-teams", "--permission-answer-timeout", "0s", "hi"},
		{"-p", "--trust", "--agent-teams", "--explicit-teams", "--permission-answer-timeout", "-1m", "hi"},
		{"-p", "--trust", "--agent-teams", "--explicit-teams", "--idle-digest", "sometimes", "hi"},
		{"-p", "--trust", "--teammate-mode", "tmux", "hi"},
		{"--agent-id", "bob@t", "--agent-name", "bob", "--team-name", "t", "--permission-answer-timeout", "0s"},
	} {
		var out bytes.Buffer
		dir := t.TempDir()
		m := &Main{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }}
		err := m.Run(t.Context(), append([]string{"--home", dir, "--provider", "scripted", "--script", "/nonexistent"}, args...))
		if !isUsage(err) {
			t.Errorf("troupe %q: err = %v, want a usage error", args, err)
		}
	}
}
