package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/cli/agentflags"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/session/kit"
)

// secretProject makes a repository whose secret.txt the main checkout's
// uncommitted .claude/settings.local.json denies reading; the worktrees
// made from it hold secret.txt but not that file.
func secretProject(t *testing.T) (root, proj string) {
	t.Helper()
	needGit(t)
	root = t.TempDir()
	proj = filepath.Join(root, "proj")
	writeDef(t, filepath.Join(proj, "secret.txt"), "SECRET-CONTENT\n")
	writeDef(t, filepath.Join(proj, "main.go"), "package main\n")
	gitIn(t, proj, "init", "-q", "-b", "main")
	gitIn(t, proj, "add", ".")
	gitIn(t, proj, "commit", "-q", "-m", "first")
	writeDef(t, filepath.Join(proj, ".claude", "settings.local.json"), `{"permissions": {"deny": ["Read(./secret.txt)"]}}`)
	return root, proj
}

// leakTurns are an agent's turns, routed by the text of its prompt or
// system prompt (match), that read secret.txt with Read, Grep and cat and
// answer LEAKED when a result shows its content, else DENIED-ALL.
func leakTurns(match string) string {
	return `
 {"match":{` + match + `,"turn":0},"reply":{"tool_calls":[
   {"name":"Read","input":{"file_path":"secret.txt"}},
   {"name":"Grep","input":{"pattern":"SECRET","path":".","output_mode":"content"}},
   {"name":"Bash","input":{"command":"cat secret.txt"}},
   {"name":"Read","input":{"file_path":"main.go"}}]}},
 {"match":{` + match + `,"user":"SECRET-CONTENT"},"reply":{"text":"LEAKED"},"repeat":true},
 {"match":{` + match + `,"user":"package main"},"reply":{"text":"DENIED-ALL"}}`
}

// A sub-agent with isolation "worktree" reads its worktree's secret.txt
// with Read, Grep and cat: the project's deny rule, anchored at the main
// checkout, holds there too.
func TestSubAgentWorktreeRules(t *testing.T) {
	root, proj := secretProject(t)
	script := filepath.Join(root, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"Agent","input":{"description":"peek","prompt":"PEEK-ANN","name":"ann","isolation":"worktree"}}]}},
 {"match":{"system":"You are troupe,","user":"LEAKED"},"reply":{"text":"LEAD-SAW-LEAK"}},
 {"match":{"system":"You are troupe,","user":"DENIED-ALL"},"reply":{"text":"LEAD-OK"}},`+leakTurns(`"user":"PEEK-ANN"`)+`
]}`)
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, HomeDir: func() (string, error) { return root, nil }}
	err := m.Run(t.Context(), []string{"--home", filepath.Join(root, "home"), "-p", "--trust", "--allowedTools", "Agent", "--cwd", proj,
		"--provider", "scripted", "--script", script, "--output-format", "stream-json", "go"})
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "LEAD-OK") || strings.Contains(out.String(), "LEAKED") {
		t.Errorf("the sub-agent read its worktree's secret.txt, or did not finish:\n%s", out.String())
	}
}

// An in-process teammate in its own worktree (--worktrees) is held by
// the same rule.
func TestTeamWorktreeRules(t *testing.T) {
	root, proj := secretProject(t)
	script := filepath.Join(root, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"wt"}},
   {"name":"Agent","input":{"description":"peek","name":"ann","prompt":"PEEK-ANN"}}]}},
 {"match":{"system":"You are troupe,","tool_result":"TeamDelete"},"reply":{"text":"LEAD-DONE"},"repeat":true},
 {"match":{"system":"You are troupe,","user":"idle"},"reply":{"tool_calls":[{"name":"TeamDelete","input":{}}]},"repeat":true},
 {"match":{"system":"You are troupe,"},"reply":{"text":"WAITING"},"repeat":true},`+leakTurns(`"system":"teammate ann"`)+`,
 {"match":{"system":"teammate"},"reply":{"text":"MATE-DONE"},"repeat":true}
]}`)
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, HomeDir: func() (string, error) { return root, nil }}
	err := m.Run(t.Context(), []string{"--home", filepath.Join(root, "home"), "-p", "--trust", "--agent-teams", "--explicit-teams", "--teammate-mode", "in-process", "--worktrees",
		"--allowedTools", "Agent", "--cwd", proj, "--provider", "scripted", "--script", script, "--output-format", "stream-json", "go"})
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "LEAD-DONE") || strings.Contains(out.String(), "LEAKED") || strings.Contains(out.String(), "SECRET-CONTENT") {
		t.Errorf("the teammate read its worktree's secret.txt, or the team did not finish:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "DENIED-ALL") {
		t.Errorf("the teammate's turns did not run as scripted:\n%s", out.String())
	}
}

// A pane teammate started in its worktree takes the deny rules of the
// main checkout's settings (its .claude/settings.local.json is not in the
// worktree), anchored in the worktree.
func TestPaneWorktreeRules(t *testing.T) {
	root, proj := secretProject(t)
	tree := filepath.Join(root, "proj-worktrees", "wt", "ann")
	gitIn(t, proj, "worktree", "add", "-q", "-b", "troupe/wt/ann", tree)
	a := newApp(Main{Getenv: func(string) string { return "" }, HomeDir: func() (string, error) { return root, nil }})
	p := agentflags.Permissions{PromptTimeout: agentflags.DefaultPromptTimeout}
	ap, closeAudit, err := p.Approver(a.App, tree)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAudit()
	if err := a.mainCheckoutRules(ap, tree); err != nil {
		t.Fatal(err)
	}
	kit.FollowWorktree(ap)
	for _, req := range []struct{ tool, input string }{
		{"Read", `{"file_path":"` + filepath.Join(tree, "secret.txt") + `"}`},
		{"Bash", `{"command":"cat secret.txt"}`},
	} {
		d := ap.Policy.Check(permission.Request{Tool: req.tool, Input: json.RawMessage(req.input), Cwd: tree, Mode: permission.ModeAcceptEdits})
		if d.Behavior != permission.Deny {
			t.Errorf("%s %s in the pane teammate's worktree = %s (%s); want deny", req.tool, req.input, d.Behavior, d.Reason)
		}
	}
}
