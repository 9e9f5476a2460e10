package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/shell"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/team"
)

// A teammate in a process of its own (as in a pane) asks the person: its
// question travels by mail to the lead's QuestionAnswerer, with its name,
// and the answer reaches its model, which reports it to the lead.
func TestProcessTeammateAsk(t *testing.T) {
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"teammate outy","turn":0},"reply":{"tool_calls":[{"name":"AskUserQuestion","input":`+askInput+`}]}},
 {"match":{"system":"teammate outy","tool_result":"AskUserQuestion","user":"=\"Bob\""},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","summary":"answer","message":"OUTY-GOT-BOB"}}]}},
 {"match":{"system":"teammate outy"},"reply":{"text":"OUTY-DONE"},"repeat":true}
]}`)
	s, err := scripted.Load(script)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var asked []swarm.QuestionAsk
	var delivered []string
	answer := func(_ context.Context, q swarm.QuestionAsk) (ask.Reply, error) {
		mu.Lock()
		asked = append(asked, q)
		mu.Unlock()
		return ask.Reply{Answers: ask.Answers{"Which database?": "Postgres", "Who reviews?": "Bob"}}, nil
	}
	events := make(chan swarm.Event, 256)
	a := newApp(Main{Stderr: os.Stderr})
	a.HomeFlag = home
	base := &approve.Approver{Policy: permission.Policy{Shell: shell.Parse}, Cwd: cwd, Mode: permission.ModeDefault}
	lt, err := a.newLeadTeam(&headless{}, backend.ModeInProcess, kit.LeadTeamConfig{Session: "s-ask", Approver: base, AnswerQuestions: answer,
		Mates:   kit.InProcess{Cwd: cwd, Model: scripted.New(s), Approver: base},
		Deliver: func(text string) { mu.Lock(); delivered = append(delivered, text); mu.Unlock() },
		OnEvent: func(e swarm.Event) { t.Logf("%s %s %s", e.Agent, e.Kind, e.Text); events <- e }})
	if err != nil {
		t.Fatal(err)
	}
	defer lt.close()
	ctx := t.Context()
	cfg, err := lt.Lead.CreateTeam(ctx, "asks", "", "")
	if err != nil {
		t.Fatal(err)
	}
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
	timeout := time.After(60 * time.Second)
	for done := false; !done; {
		select {
		case e := <-events:
			done = e.Agent == "outy" && e.Kind == swarm.EventIdle
		case <-timeout:
			t.Fatalf("outy did not go idle within 60 s:\n%s", outErr.String())
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0].Worker != "outy" || len(asked[0].Questions) != 2 || asked[0].Questions[1].Header != "Reviewer" {
		t.Errorf("the lead was asked %+v; want outy's two questions", asked)
	}
	if !strings.Contains(strings.Join(delivered, "\n"), "OUTY-GOT-BOB") {
		t.Errorf("outy's model did not get the answer; the lead was handed:\n%s\nouty:\n%s", strings.Join(delivered, "\n"), outErr.String())
	}
}
