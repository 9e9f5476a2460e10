package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/session/kit"
)

// implicitScript is a lead that creates a task and spawns teammate ann
// (after calling TeamCreate for team crew when explicit) and a teammate
// that answers the lead's shutdown request.
func implicitScript(t *testing.T, dir string, explicit bool) string {
	t.Helper()
	var calls []map[string]any
	if explicit {
		calls = append(calls, map[string]any{"name": "TeamCreate", "input": map[string]string{"team_name": "crew", "description": "explicit"}})
	}
	calls = append(calls, map[string]any{"name": "TaskCreate", "input": map[string]string{"subject": "Greet", "description": "say hello"}})
	calls = append(calls, map[string]any{"name": "Agent", "input": map[string]any{"description": "helper", "name": "ann", "prompt": "say hello",
		"team_name": "ignored"}}) // accepted and ignored
	turns := []map[string]any{
		{"match": map[string]any{"system": "You are troupe,", "turn": 0}, "reply": map[string]any{"tool_calls": calls}},
		{"match": map[string]any{"system": "You are troupe,"}, "reply": map[string]any{"text": "done"}, "repeat": true},
		{"match": map[string]any{"system": "You are teammate", "user": "shutdown_request"}, "reply": map[string]any{"tool_calls": []map[string]any{
			{"name": "SendMessage", "input": map[string]any{"to": "team-lead", "message": map[string]any{"type": "shutdown_response",
				"request_id": `{{capture:"request_id": "(shutdown-[^"]+)"}}`, "approve": true}}}}}, "repeat": true},
		{"match": map[string]any{"system": "You are teammate"}, "reply": map[string]any{"text": "hello"}, "repeat": true},
	}
	b, err := json.Marshal(map[string]any{"turns": turns})
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, string(b))
	return script
}

// runTeamLead runs `troupe -p --agent-teams` in-process with the script
// and extra flags, and returns its stream-json output, the session id
// and the tools of its init event.
func runTeamLead(t *testing.T, home, cwd, script string, extra ...string) (out, session string, tools []string, err error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	m := &Main{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
	args := append([]string{"--home", home, "-p", "--trust", "--agent-teams", "--teammate-mode", "in-process", "--cwd", cwd,
		"--provider", "scripted", "--script", script, "--shutdown-answer-timeout", "10s", "--output-format", "stream-json"}, extra...)
	err = m.Run(t.Context(), append(args, "go"))
	out = stdout.String()
	for line := range strings.SplitSeq(out, "\n") {
		var e struct {
			Type, Subtype string
			SessionID     string `json:"session_id"`
			Tools         []string
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Type == "system" && e.Subtype == "init" {
			session, tools = e.SessionID, e.Tools
			break
		}
	}
	if err != nil {
		return out + stderr.String(), session, tools, err
	}
	return out, session, tools, nil
}

// teamMembers returns the member names of team name in home, or nil and
// false when it has no team file.
func teamMembers(t *testing.T, home, name string) ([]string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "teams", name, "config.json"))
	if err != nil {
		return nil, false
	}
	var c struct{ Members []struct{ Name string } }
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("team %s: %v", name, err)
	}
	var names []string
	for _, m := range c.Members {
		names = append(names, m.Name)
	}
	return names, true
}

// By default a lead is offered no TeamCreate or TeamDelete, and its
// named Agent call (with a team_name, ignored) spawns the teammate into
// the session's own team, session-<first 8 hex of the session id>; the
// team is removed at the run's end, or kept with --keep-team.
func TestImplicitTeamByDefault(t *testing.T) {
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir) // swarm_test.go
	script := implicitScript(t, dir, false)

	out, session, tools, err := runTeamLead(t, home, cwd, script, "--keep-team")
	if err != nil {
		t.Fatalf("troupe -p --agent-teams: %v\n%s", err, out)
	}
	if slices.Contains(tools, "TeamCreate") || slices.Contains(tools, "TeamDelete") || !slices.Contains(tools, "Agent") || !slices.Contains(tools, "SendMessage") {
		t.Errorf("the lead's tools by default: %v; want Agent and SendMessage, no TeamCreate or TeamDelete", tools)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-`).MatchString(session) {
		t.Fatalf("session id %q is not a uuid\n%s", session, out)
	}
	team := kit.SessionTeam(session)
	if team != "session-"+session[:8] {
		t.Fatalf("SessionTeam(%q) = %q", session, team)
	}
	members, ok := teamMembers(t, home, team)
	if !ok || !slices.Contains(members, "team-lead") || !slices.Contains(members, "ann") {
		t.Fatalf("team %s kept with --keep-team: members %v (file there: %v); want team-lead and ann\n%s", team, members, ok, out)
	}
	if _, err := os.Stat(filepath.Join(home, "tasks", team, "1.json")); err != nil {
		t.Errorf("the lead's TaskCreate did not land in the session's task list: %v\n%s", err, out)
	}
	if _, ok := teamMembers(t, home, "ignored"); ok {
		t.Error("the Agent call's team_name made a team; it is to be ignored")
	}

	out, session, _, err = runTeamLead(t, home, cwd, script)
	if err != nil {
		t.Fatalf("troupe -p --agent-teams: %v\n%s", err, out)
	}
	team = kit.SessionTeam(session)
	if team == "" || !strings.Contains(out, team) {
		t.Fatalf("the run's output never names the session's team %q: ann did not join it\n%s", team, out)
	}
	if _, ok := teamMembers(t, home, team); ok || team == "" {
		t.Errorf("the session's team %q is still there after the run's end", team)
	}
}

// teams.explicit true in a settings file (or --explicit-teams) offers the
// lead TeamCreate and TeamDelete, and a team it creates is the one its
// teammates join; a teams value of the wrong type is an error naming the
// file.
func TestExplicitTeamsSetting(t *testing.T) {
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir) // swarm_test.go
	script := implicitScript(t, dir, true)
	settingsFile := filepath.Join(cwd, ".troupe", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settingsFile), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, settingsFile, `{"teams": {"explicit": true}}`)

	out, session, tools, err := runTeamLead(t, home, cwd, script, "--keep-team")
	if err != nil {
		t.Fatalf("troupe -p --agent-teams with teams.explicit: %v\n%s", err, out)
	}
	if !slices.Contains(tools, "TeamCreate") || !slices.Contains(tools, "TeamDelete") {
		t.Errorf("the lead's tools with teams.explicit: %v; want TeamCreate and TeamDelete", tools)
	}
	if members, ok := teamMembers(t, home, "crew"); !ok || !slices.Contains(members, "ann") {
		t.Fatalf("team crew: members %v (file there: %v); want ann in it\n%s", members, ok, out)
	}
	if _, ok := teamMembers(t, home, kit.SessionTeam(session)); ok {
		t.Error("a lead that created its team also got the session's team")
	}

	// The flag does the same with no setting.
	writeFile(t, settingsFile, `{}`)
	if _, _, tools, err := runTeamLead(t, home, cwd, script, "--explicit-teams"); err != nil || !slices.Contains(tools, "TeamCreate") {
		t.Errorf("--explicit-teams: tools %v, err %v; want TeamCreate offered", tools, err)
	}

	writeFile(t, settingsFile, `{"teams": {"explicit": "yes"}}`)
	if _, _, _, err := runTeamLead(t, home, cwd, script); err == nil || !strings.Contains(err.Error(), settingsFile) {
		t.Errorf("a bad teams.explicit: err = %v; want one naming %s", err, settingsFile)
	}
}
