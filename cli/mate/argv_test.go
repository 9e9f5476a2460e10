package mate

import (
	"slices"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/team"
)

// The command line and environment of a Claude Code teammate, without
// running it: the teammate flags in the real lead's order, the troupe
// home as CLAUDE_CONFIG_DIR, the team's list, the todo tools on unless
// the lead's environment says otherwise, an unset provider variable
// masked.
func TestClaudeArgv(t *testing.T) {
	env := map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:1"}
	getenv := func(k string) string { return env[k] }
	m := team.Member{AgentID: "helper@mixed", Name: "helper", Color: "blue", Mode: "acceptEdits", Model: "claude-opus-5-5"}
	argv, penv, err := ClaudeArgv("/opt/claude", "/h/.claude", m, swarm.SpawnRequest{PlanModeRequired: true, Model: "claude-opus-5-5"}, "sess-1", "", getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/opt/claude", "--agent-id", "helper@mixed", "--agent-name", "helper", "--team-name", "mixed", "--agent-color", "blue",
		"--parent-session-id", "sess-1", "--plan-mode-required", "--permission-mode", "acceptEdits", "--model", "claude-opus-5-5"}
	if !slices.Equal(argv, want) {
		t.Errorf("argv %q\nwant %q", argv, want)
	}
	for k, v := range map[string]string{"CLAUDECODE": "1", EnvClaudeAgentTeams: "1", "CLAUDE_CONFIG_DIR": "/h/.claude",
		"CLAUDE_CODE_TASK_LIST_ID": "mixed", EnvClaudeTodoTools: "1", "ANTHROPIC_BASE_URL": "http://127.0.0.1:1", "ANTHROPIC_API_KEY": ""} {
		if got, ok := penv[k]; !ok || got != v {
			t.Errorf("env %s = %q (set: %v); want %q", k, got, ok, v)
		}
	}
	// bypassPermissions is Claude Code's own flag; the lead's choice of
	// todo tools wins.
	env[EnvClaudeTodoTools] = "0"
	m.Mode = "bypassPermissions" // m.Model stays the lead's: not passed on without the call naming one
	argv, penv, err = ClaudeArgv("/opt/claude", "/h/.claude", m, swarm.SpawnRequest{}, "sess-1", "", getenv)
	if err != nil {
		t.Fatal(err)
	}
	if argv[len(argv)-1] != "--dangerously-skip-permissions" || slices.Contains(argv, "--model") || slices.Contains(argv, "--plan-mode-required") {
		t.Errorf("argv %q: want --dangerously-skip-permissions last, no --model, no --plan-mode-required", argv)
	}
	if penv[EnvClaudeTodoTools] != "0" {
		t.Errorf("%s = %q; want the lead's 0", EnvClaudeTodoTools, penv[EnvClaudeTodoTools])
	}
	// A bare name is looked up on PATH, and a missing one is an error
	// naming the flag.
	if _, _, err := ClaudeArgv("no-such-claude-program-xyz", "/h", m, swarm.SpawnRequest{}, "s", "", getenv); err == nil || !strings.Contains(err.Error(), "--teammate-command no-such-claude-program-xyz") {
		t.Errorf("missing program: err = %v; want one naming --teammate-command", err)
	}
}

// What a lead puts on a teammate's command line is what a teammate
// reads back: the two ends of the protocol agree, lead key included,
// and the raw scan a failed start relies on finds the same identity.
func TestArgvRoundTrip(t *testing.T) {
	m := team.Member{AgentID: "helper@session-f1cb6ba9", Name: "helper", Color: "green"}
	key := observedArgv[11]
	argv := Argv("/bin/troupe", m, "sess-9", key)
	f, _, _, err := parseTeammate(t, nil, argv[1:]...)
	if err != nil {
		t.Fatalf("parse %q: %v", argv, err)
	}
	if !f.Enabled() || f.AgentID != m.AgentID || f.AgentName != "helper" || f.TeamName != "session-f1cb6ba9" ||
		f.AgentColor != "green" || f.ParentSessionID != "sess-9" || f.LeadKey == nil || f.LeadKey.String() != key {
		t.Errorf("read back %+v from %q", f, argv)
	}
	if got := Argv("/bin/troupe", m, "sess-9", ""); slices.Contains(got, "--lead-verify-key") || len(got) != 11 {
		t.Errorf("without a key: %q; want the program and the five identity flags", got)
	}
	id, ok := IdentityOf(append(argv[1:], "--home", "/h"))
	if !ok || id != (Identity{Name: "helper", Team: "session-f1cb6ba9", Home: "/h"}) {
		t.Errorf("IdentityOf = %+v, %v", id, ok)
	}
}

func TestIdentityOf(t *testing.T) {
	for _, c := range []struct {
		args []string
		want Identity
		ok   bool
	}{
		{[]string{"--agent-id=a@t", "--home=/x"}, Identity{Name: "a", Team: "t", Home: "/x"}, true},
		{[]string{"--agent-name", "a", "--team-name", "t", "--bogus"}, Identity{Name: "a", Team: "t"}, true},
		{[]string{"--agent-name", "a"}, Identity{Name: "a"}, false},
		{[]string{"--agent-id", "not-an-id"}, Identity{}, false},
		{[]string{"-p", "hello"}, Identity{}, false},
	} {
		got, ok := IdentityOf(c.args)
		if got != c.want || ok != c.ok {
			t.Errorf("IdentityOf(%q) = %+v, %v; want %+v, %v", c.args, got, ok, c.want, c.ok)
		}
	}
}
