package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/mcp"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/shell"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/tasklist"
)

// TestMCPMemberWithInProcessTeammate: in a team run by troupe's lead
// runtime, an in-process teammate (scripted) and a member attached
// through troupe mcp serve (troupe's go-sdk client) each claim a task and
// exchange messages both ways, on the file store.
func TestMCPMemberWithInProcessTeammate(t *testing.T) {
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"teammate inny","user":"CODEX-HELLO"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"codex","message":"INNY-ACK"}}]}},
 {"match":{"system":"teammate inny","tool_result":"SendMessage"},"reply":{"text":"ok"}},
 {"match":{"system":"teammate inny","tool_result":"TaskUpdate"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"codex","message":"INNY-HELLO"}}]}},
 {"match":{"system":"teammate inny","turn":0},"reply":{"tool_calls":[{"name":"TaskUpdate","input":{"taskId":"2","owner":"inny","status":"in_progress"}}]}},
 {"match":{"system":"teammate inny"},"reply":{"text":"ok"},"repeat":true}
]}`)
	s, err := scripted.Load(script)
	if err != nil {
		t.Fatal(err)
	}
	a := newApp(Main{Stderr: os.Stderr})
	a.HomeFlag = home
	trustTemp(t, a.HomeFlag) // main_test.go
	base := &approve.Approver{Policy: permission.Policy{Shell: shell.Parse}, Cwd: cwd, Mode: permission.ModeBypass}
	lt, err := a.newLeadTeam(&headless{}, backend.ModeInProcess, kit.LeadTeamConfig{Session: "s-mcp", Approver: base,
		Mates: kit.InProcess{Cwd: cwd, Model: scripted.New(s), Approver: base}, Deliver: func(string) {},
		OnEvent: func(e swarm.Event) { t.Logf("%s %s %s", e.Agent, e.Kind, e.Text) }})
	if err != nil {
		t.Fatal(err)
	}
	defer lt.close()
	ctx := t.Context()
	cfg, err := lt.Lead.CreateTeam(ctx, "mixed", "", "")
	if err != nil {
		t.Fatal(err)
	}
	list := tasklist.New(lt.Stores.Tasks, cfg.Name)
	for _, subject := range []string{"for codex", "for inny"} {
		if _, err := list.Create(ctx, tasklist.Draft{Subject: subject}); err != nil {
			t.Fatal(err)
		}
	}
	m := mcp.Start(ctx, []mcp.Server{{Name: "team", Command: os.Args[0], Args: []string{"--home", home, "mcp", "serve", "--team", cfg.Name, "--agent", "codex"},
		Env: map[string]string{asTroupeEnv: "1", "GORACE": "atexit_sleep_ms=0"}}}, mcp.Options{StartTimeout: 20 * time.Second})
	defer m.Close()
	if st := m.Status()[0]; st.State != mcp.StateConnected {
		t.Fatalf("mcp serve: %v", st.Err)
	}
	tools := m.Tools()
	if res := call(t, tools, "mcp__team__TaskUpdate", `{"taskId":"1","owner":"codex","status":"in_progress"}`); res.IsError {
		t.Fatalf("codex claims task 1: %+v", res)
	}
	if _, err := lt.Lead.Spawn(ctx, swarm.SpawnRequest{Name: "inny", Prompt: "go"}); err != nil {
		t.Fatal(err)
	}
	waitFor := func(what string) string {
		t.Helper()
		var got []string
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
			res := call(t, tools, "mcp__team__WaitForWork", `{"timeout_seconds": 5}`)
			got = append(got, res.Content)
			if strings.Contains(res.Content, what) {
				return res.Content
			}
		}
		t.Fatalf("codex never got %s; got %q", what, got)
		return ""
	}
	waitFor("INNY-HELLO")
	if res := call(t, tools, "mcp__team__SendMessage", `{"to":"inny","message":"CODEX-HELLO","summary":"hello"}`); res.IsError {
		t.Fatalf("codex to inny: %+v", res)
	}
	waitFor("INNY-ACK")
	for id, owner := range map[string]string{"1": "codex", "2": "inny"} {
		task, err := list.Get(ctx, id)
		if err != nil || task.Owner != owner {
			t.Errorf("task %s: owner %q, %v; want %s", id, task.Owner, err, owner)
		}
	}
}
