package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/shell"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// teamHookSettings gates completion on a done-<id> file and keeps ann
// working once when she would go idle.
const teamHookSettings = `{"hooks": {
  "TaskCompleted": [{"hooks": [{"type": "command", "command": "$HOOKS/done.sh", "timeout": 10}]}],
  "TeammateIdle": [{"hooks": [{"type": "command", "command": "$HOOKS/idle.sh", "timeout": 10}]}]}}`

var teamHookScripts = map[string]string{
	"done.sh": `in=$(cat); id=$(printf '%s' "$in" | sed -n 's/.*"task_id":"\([^"]*\)".*/\1/p')
who=$(printf '%s' "$in" | sed -n 's/.*"teammate_name":"\([^"]*\)".*/\1/p')
if [ -f "$CLAUDE_PROJECT_DIR/done-$id" ]; then echo "$who $id ok" >> "$CLAUDE_PROJECT_DIR/gate.log"; exit 0; fi
echo "$who $id refused" >> "$CLAUDE_PROJECT_DIR/gate.log"
echo "create done-$id first" >&2; exit 2`,
	"idle.sh": `in=$(cat); case "$in" in *'"teammate_name":"ann"'*) ;; *) exit 0;; esac
[ -f "$CLAUDE_PROJECT_DIR/ann-checked" ] && exit 0
touch "$CLAUDE_PROJECT_DIR/ann-checked"; echo "run the checks once more before you stop" >&2; exit 2`,
}

// teamScript has each teammate complete its task: refused, then the file,
// then accepted; ann answers the TeammateIdle hook's feedback.
const teamHookModel = `{"turns":[
 {"match":{"system":"teammate ann","turn":0},"reply":{"tool_calls":[{"name":"TaskUpdate","input":{"taskId":"1","status":"completed"}}]}},
 {"match":{"system":"teammate ann","user":"create done-1 first"},"reply":{"tool_calls":[{"name":"Bash","input":{"command":"touch done-1"}}]}},
 {"match":{"system":"teammate ann","turn":2},"reply":{"tool_calls":[{"name":"TaskUpdate","input":{"taskId":"1","status":"completed"}}]}},
 {"match":{"system":"teammate ann","turn":3},"reply":{"text":"ANN-DONE"}},
 {"match":{"system":"teammate ann","user":"run the checks once more"},"reply":{"text":"ANN-CHECKED"}},
 {"match":{"system":"teammate bob","turn":0},"reply":{"tool_calls":[{"name":"TaskUpdate","input":{"taskId":"2","status":"completed"}}]}},
 {"match":{"system":"teammate bob","user":"create done-2 first"},"reply":{"tool_calls":[{"name":"Bash","input":{"command":"touch done-2"}}]}},
 {"match":{"system":"teammate bob","turn":2},"reply":{"tool_calls":[{"name":"TaskUpdate","input":{"taskId":"2","status":"completed"}}]}},
 {"match":{"system":"teammate bob","turn":3},"reply":{"text":"BOB-DONE"}},
 {"match":{"system":"teammate outy","turn":0},"reply":{"tool_calls":[{"name":"TaskUpdate","input":{"taskId":"3","status":"completed"}}]}},
 {"match":{"system":"teammate outy","user":"create done-3 first"},"reply":{"tool_calls":[{"name":"Bash","input":{"command":"touch done-3"}}]}},
 {"match":{"system":"teammate outy","turn":2},"reply":{"tool_calls":[{"name":"TaskUpdate","input":{"taskId":"3","status":"completed"}}]}},
 {"match":{"system":"teammate outy","turn":3},"reply":{"text":"OUTY-DONE"}}
]}`

// A team of two in-process teammates and one teammate in its own process
// (as in a pane) under TaskCompleted and TeammateIdle hooks: no task is
// completed before its file exists, each model sees the hook's reason,
// and ann is kept working once.
func TestHooksTeamGates(t *testing.T) {
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	os.MkdirAll(filepath.Join(cwd, ".claude"), 0o755)
	os.MkdirAll(filepath.Join(dir, "hooks"), 0o755)
	for name, body := range teamHookScripts {
		writeFile(t, filepath.Join(dir, "hooks", name), "#!/bin/sh\n"+body+"\n")
		os.Chmod(filepath.Join(dir, "hooks", name), 0o755)
	}
	writeFile(t, filepath.Join(cwd, ".claude", "settings.json"), strings.ReplaceAll(teamHookSettings, "$HOOKS", filepath.Join(dir, "hooks")))
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, teamHookModel)
	s, err := scripted.Load(script)
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan swarm.Event, 256)
	var hookWarnings bytes.Buffer
	a := newApp(Main{Stderr: os.Stderr})
	a.HomeFlag = home
	trustTemp(t, a.HomeFlag) // main_test.go
	if _, err := a.openHooks(cwd, "s-hooks", nil, &hookWarnings); err != nil {
		t.Fatal(err)
	}
	base := &approve.Approver{Policy: permission.Policy{Shell: shell.Parse}, Cwd: cwd, Mode: permission.ModeBypass}
	lt, err := a.newLeadTeam(&headless{}, backend.ModeInProcess, kit.LeadTeamConfig{Session: "s-hooks", Approver: base,
		Mates: kit.InProcess{Cwd: cwd, Model: scripted.New(s), Approver: base}, Deliver: func(string) {},
		OnEvent: func(e swarm.Event) { t.Logf("%s %s %s", e.Agent, e.Kind, e.Text); events <- e }})
	if err != nil {
		t.Fatal(err)
	}
	defer lt.close()
	ctx := t.Context()
	cfg, err := lt.Lead.CreateTeam(ctx, "gates", "", "")
	if err != nil {
		t.Fatal(err)
	}
	list := tasklist.New(lt.Stores.Tasks, cfg.Name)
	for _, owner := range []string{"ann", "bob", "outy"} {
		if _, err := list.Create(ctx, tasklist.Draft{Subject: "work of " + owner, Description: "x", Owner: owner}); err != nil {
			t.Fatal(err)
		}
	}
	idle, kept := map[string]int{}, map[string]int{}
	waitIdle := func(name string, n int) {
		t.Helper()
		timeout := time.After(60 * time.Second)
		for idle[name] < n {
			select {
			case e := <-events:
				switch {
				case e.Kind == swarm.EventHook && strings.HasPrefix(e.Text, "kept working"):
					kept[e.Agent]++
				case e.Kind == swarm.EventIdle:
					idle[e.Agent]++
				}
			case <-timeout:
				t.Fatalf("timed out waiting for %s to go idle (log: %s)", name, readFile(t, filepath.Join(cwd, "gate.log")))
			}
		}
	}
	for _, name := range []string{"ann", "bob"} {
		if _, err := lt.Lead.Spawn(ctx, swarm.SpawnRequest{Name: name, Prompt: "complete your task"}); err != nil {
			t.Fatal(err)
		}
	}
	active := true
	if _, err := team.AddMember(ctx, lt.Stores.Teams, cfg.Name, team.Member{Name: "outy", Cwd: cwd, IsActive: &active, BackendType: "tmux"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := lt.Stores.Mail.Send(ctx, cfg.Name, "outy", mailbox.Message{From: team.LeadName, Text: "complete your task"}); err != nil {
		t.Fatal(err)
	}
	c := exec.CommandContext(ctx, os.Args[0], "--agent-id", "outy@"+cfg.Name, "--agent-name", "outy", "--team-name", cfg.Name,
		"--home", home, "--cwd", cwd, "--provider", "scripted", "--script", script, "--permission-mode", "bypassPermissions")
	c.Env = append(troupeEnv(t, "unused"), "HOME="+dir)
	var outErr bytes.Buffer
	c.Stdout, c.Stderr = &outErr, &outErr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Process.Kill(); _ = c.Wait() }()
	waitIdle("ann", 1)
	waitIdle("bob", 1)
	waitIdle("outy", 1)

	tasks, err := list.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range tasks {
		if tk.Status != tasklist.StatusCompleted {
			t.Errorf("task %s (%s) is %s; want completed", tk.ID, tk.Owner, tk.Status)
		}
	}
	log := readFile(t, filepath.Join(cwd, "gate.log"))
	for _, who := range []string{"ann 1", "bob 2", "outy 3"} {
		r, ok := strings.Index(log, who+" refused"), strings.Index(log, who+" ok")
		if r < 0 || ok < r {
			t.Errorf("gate log %q: want %q refused, then ok", log, who)
		}
	}
	if readFile(t, filepath.Join(cwd, "ann-checked")) == "\x00missing" {
		t.Error("the TeammateIdle hook never ran for ann")
	}
	if kept["ann"] != 1 || kept["bob"] != 0 {
		t.Errorf("kept working: %v; want ann once, bob never", kept)
	}
	if hookWarnings.Len() > 0 {
		t.Errorf("hook warnings: %s", hookWarnings.String())
	}
}

// readFile returns a file's text, or "\x00missing".
func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "\x00missing"
	}
	return string(b)
}
