package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/cli/mate"
)

// askInput is an AskUserQuestion input: a question with a preview, then
// one answered in the person's own words.
const askInput = `{"questions":[
 {"question":"Which database?","header":"Database","multiSelect":false,"options":[
   {"label":"Postgres","description":"a server"},{"label":"SQLite","description":"one file","preview":"PREVIEW: sql.Open(sqlite, app.db)"}]},
 {"question":"Who reviews?","header":"Reviewer","multiSelect":false,"options":[
   {"label":"Alice","description":"owns it"},{"label":"Bob","description":"owns CI"}]}]}`

// In a real terminal the lead's question shows as a dialog; an option
// and an "Other" answer reach the model as the tool result.
func TestTUIAsk(t *testing.T) {
	dir := t.TempDir()
	script := `{"turns":[
 {"match":{"user":"ask me"},"reply":{"tool_calls":[{"name":"AskUserQuestion","input":` + askInput + `}]}},
 {"match":{"tool_result":"AskUserQuestion","user":"\"Which database?\"=\"SQLite\", \"Who reviews?\"=\"Carol\""},"reply":{"text":"GOT-THE-ANSWERS"}},
 {"match":{"tool_result":"AskUserQuestion"},"reply":{"text":"WRONG-ANSWERS"}}
]}`
	scriptFile := filepath.Join(dir, "script.json")
	writeFile(t, scriptFile, script)
	p := startTUISize(t, 80, 24, dir, []string{"TROUPE_HOME=" + filepath.Join(dir, "home"), "HOME=" + dir}, "--provider", "scripted", "--script", scriptFile)
	p.submit("ask me")
	s := p.wait("team-lead asks you:", 10*time.Second)
	for _, want := range []string{"Which database?", "1. Postgres", "3. Other", "Esc decline"} {
		if !strings.Contains(s, want) {
			t.Errorf("the dialog lacks %q:\n%s", want, s)
		}
	}
	p.keys("Down")
	p.wait("PREVIEW: sql.Open(sqlite, app.db)", 5*time.Second)
	p.keys("Enter")
	p.wait("Who reviews?", 5*time.Second)
	p.keys("3")
	p.wait("Your answer to", 5*time.Second)
	p.text("Carol")
	p.keys("Enter")
	s = p.wait("GOT-THE-ANSWERS", 10*time.Second)
	if !strings.Contains(s, "questions answered: Database: SQLite · Reviewer: Carol") {
		t.Errorf("the answer is not on the screen:\n%s", s)
	}
	p.quit()
}

// A teammate's question reaches the lead's person with its name, and the
// answer reaches the teammate's model.
func TestTUITeamAsk(t *testing.T) {
	dir := t.TempDir()
	script := `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"text":"Forming the team.","tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"ask-team","description":"asks"}},
   {"name":"Agent","input":{"description":"asker","name":"alice","prompt":"ask the person"}}]}},
 {"match":{"system":"You are troupe,"},"reply":{"text":"Noted."},"repeat":true},
 {"match":{"system":"You are teammate","user":"shutdown_request"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","message":{"type":"shutdown_response","request_id":"{{capture:\"request_id\": \"(shutdown-[^\"]+)\"}}","approve":true}}}]},"repeat":true},
 {"match":{"system":"You are teammate","turn":0},"reply":{"tool_calls":[{"name":"AskUserQuestion","input":` + askInput + `}]}},
 {"match":{"system":"You are teammate","tool_result":"AskUserQuestion","user":"=\"Postgres\""},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","summary":"answered","message":"ALICE-GOT-POSTGRES"}}]}},
 {"match":{"system":"You are teammate"},"reply":{"text":"Waiting."},"repeat":true}
]}`
	scriptFile := filepath.Join(dir, "script.json")
	writeFile(t, scriptFile, script)
	p := startTUI(t, dir, []string{"TROUPE_HOME=" + filepath.Join(dir, "home"), "HOME=" + dir, mate.EnvAgentTeams + "=1"},
		"--provider", "scripted", "--script", scriptFile, "--teammate-mode", "in-process", "--explicit-teams", "--shutdown-answer-timeout", "10s")
	p.submit("form a team")
	p.wait("alice asks you:", 20*time.Second)
	p.keys("1")
	p.wait("Who reviews?", 5*time.Second)
	p.keys("2")
	p.wait("alice: ALICE-GOT-POSTGRES", 15*time.Second)
	p.quit()
}
