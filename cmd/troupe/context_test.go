package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/troupe-dev/troupe/llm/llmtest"
)

// What reaches the model, through the Anthropic SDK: the lead's role
// prompt and the project instructions (user file, then the folders from
// the top down, nearer last) in the cached system block; the environment
// (date, git branch and status) in a second block after the breakpoint; a
// subfolder's AGENTS.md only once the agent reads a file under it.
func TestWhatTheAgentIsTold(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	home := filepath.Join(root, "userhome")
	cwd := filepath.Join(root, "parent", "proj")
	writeFile2(t, filepath.Join(home, ".claude", "CLAUDE.md"), "USER-RULE: be terse")
	writeFile2(t, filepath.Join(root, "parent", "AGENTS.md"), "PARENT-RULE")
	writeFile2(t, filepath.Join(cwd, "CLAUDE.md"), "PROJECT-RULE: run make test. See @docs/style.md")
	writeFile2(t, filepath.Join(cwd, "docs", "style.md"), "STYLE-RULE: tabs")
	writeFile2(t, filepath.Join(cwd, "pkg", "AGENTS.md"), "PKG-RULE: no globals")
	writeFile2(t, filepath.Join(cwd, "pkg", "a.go"), "package pkg\n")
	for _, args := range [][]string{{"init", "-q", "-b", "trunk"}, {"add", "CLAUDE.md"},
		{"-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-q", "-m", "init"}} {
		c := exec.Command("git", args...)
		c.Dir = cwd
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(
		llmtest.AnthropicToolCall("toolu_r", "Read", `{"file_path": "pkg/a.go"}`),
		llmtest.AnthropicText("done"),
	))
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL, "SHELL": "/bin/bash"}
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &out, Getenv: func(k string) string { return env[k] },
		HomeDir: func() (string, error) { return home, nil }}
	if err := m.Run(t.Context(), []string{"-p", "--trust", "--home", filepath.Join(root, "troupehome"), "--cwd", cwd, "read pkg/a.go"}); err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	first := reqs[0]
	if len(first.System) != 2 {
		t.Fatalf("the system prompt has %d blocks, want 2 (stable, environment)", len(first.System))
	}
	stable, volatile := first.System[0], first.System[1]
	if stable.CacheControl == nil || volatile.CacheControl != nil {
		t.Errorf("cache breakpoints: stable %v, environment %v; want only the stable block marked", stable.CacheControl, volatile.CacheControl)
	}
	order := []string{"You are troupe,", "# How to work", "USER-RULE", "PARENT-RULE", "PROJECT-RULE", "STYLE-RULE"}
	last := -1
	for _, w := range order {
		i := strings.Index(stable.Text, w)
		if i < 0 || i < last {
			t.Fatalf("the stable block lacks %q or has it out of order:\n%s", w, stable.Text)
		}
		last = i
	}
	if strings.Contains(stable.Text, "PKG-RULE") {
		t.Error("a subfolder's rules were sent before the agent worked there")
	}
	for _, w := range []string{"Working folder: " + cwd, "Today's date: ", "Shell: /bin/bash", "Git repository: yes, on branch trunk", "?? docs/", "?? pkg/"} {
		if !strings.Contains(volatile.Text, w) {
			t.Errorf("the environment lacks %q:\n%s", w, volatile.Text)
		}
	}
	// The Read under pkg/ brings its AGENTS.md with the tool result.
	second := reqs[1]
	if !strings.Contains(string(second.Body), "PKG-RULE: no globals") {
		t.Errorf("the request after Read pkg/a.go does not carry pkg/AGENTS.md")
	}
	if second.System[0].Text != stable.Text {
		t.Error("the stable system block changed between turns")
	}
	// --no-project-instructions leaves them out.
	srv2 := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(llmtest.AnthropicText("ok")))
	env["ANTHROPIC_BASE_URL"] = srv2.URL
	if err := m.Run(t.Context(), []string{"-p", "--trust", "--no-project-instructions", "--home", filepath.Join(root, "troupehome"), "--cwd", cwd, "hi"}); err != nil {
		t.Fatal(err)
	}
	if sys := srv2.Requests()[0].System[0].Text; strings.Contains(sys, "PROJECT-RULE") || strings.Contains(sys, "USER-RULE") {
		t.Errorf("--no-project-instructions still sent them:\n%s", sys)
	}
}

func writeFile2(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, content)
}

// Skills and custom commands: the skill list reaches the model and a
// Skill call returns the body; "/name args" runs the command's prompt
// with its arguments substituted.
func TestSkillsAndCommands(t *testing.T) {
	root := t.TempDir()
	cwd := filepath.Join(root, "proj")
	writeFile2(t, filepath.Join(cwd, ".claude", "skills", "release", "SKILL.md"), "---\nname: release\ndescription: Cut a release of this project\nallowed-tools: Read, Bash(git tag:*)\n---\nRELEASE-STEPS: tag, then push.\n")
	writeFile2(t, filepath.Join(cwd, ".claude", "skills", "broken", "SKILL.md"), "---\nname: broken\n")
	writeFile2(t, filepath.Join(cwd, ".troupe", "commands", "fix", "issue.md"), "---\ndescription: Fix an issue\n---\nFix issue #$1 ($ARGUMENTS) and run the tests.\n")
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(
		llmtest.AnthropicToolCall("toolu_s", "Skill", `{"skill": "release"}`),
		llmtest.AnthropicText("done"),
	))
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL}
	var out, errOut bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] },
		HomeDir: func() (string, error) { return filepath.Join(root, "home"), nil }}
	if err := m.Run(t.Context(), []string{"-p", "--trust", "--home", filepath.Join(root, "th"), "--cwd", cwd, "/fix:issue 42 urgent"}); err != nil {
		t.Fatalf("troupe -p: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	if !strings.Contains(errOut.String(), filepath.Join(cwd, ".claude", "skills", "broken", "SKILL.md")+":1: the front matter has no closing --- line") {
		t.Errorf("the malformed skill is not reported with its file and line:\n%s", errOut.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	sys := reqs[0].System[0].Text
	if !strings.Contains(sys, "<skills>") || !strings.Contains(sys, "- release: Cut a release of this project") || strings.Contains(sys, "broken") {
		t.Errorf("the skill list in the system prompt:\n%s", sys)
	}
	if !strings.Contains(string(reqs[0].Body), "Fix issue #42 (42 urgent) and run the tests.") {
		t.Errorf("the command's prompt did not reach the model: %s", reqs[0].Body)
	}
	if !strings.Contains(string(reqs[1].Body), "RELEASE-STEPS: tag, then push.") {
		t.Errorf("the Skill call did not return the body")
	}
	err := m.Run(t.Context(), []string{"-p", "--trust", "--home", filepath.Join(root, "th"), "--cwd", cwd, "/nosuch x"})
	if err == nil || !strings.Contains(err.Error(), "/nosuch: no such command; the commands here are /fix:issue") {
		t.Errorf("an unknown command: %v", err)
	}
}

// A teammate's first request carries the same project instructions as
// the lead's, with its own role prompt.
func TestTeammateIsToldTheSame(t *testing.T) {
	root := t.TempDir()
	cwd := filepath.Join(root, "proj")
	writeFile2(t, filepath.Join(cwd, "AGENTS.md"), "SHARED-RULE: every agent reads this")
	var mu sync.Mutex
	systems := map[string]string{}
	srv := llmtest.NewAnthropicServer(t, func(req *llmtest.AnthropicRequest) llmtest.AnthropicReply {
		sys := req.System[0].Text
		who := "lead"
		if strings.Contains(sys, "You are teammate helper") {
			who = "helper"
		}
		mu.Lock()
		first := systems[who] == ""
		if first {
			systems[who] = sys
		}
		mu.Unlock()
		if who == "lead" && first {
			return llmtest.AnthropicContent(
				llmtest.AnthropicToolUseBlock("toolu_tc", "TeamCreate", `{"team_name": "same"}`),
				llmtest.AnthropicToolUseBlock("toolu_ag", "Agent", `{"description": "helper", "name": "helper", "prompt": "say hi"}`))
		}
		return llmtest.AnthropicText("ok")
	})
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL}
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &out, Getenv: func(k string) string { return env[k] },
		HomeDir: func() (string, error) { return filepath.Join(root, "home"), nil }}
	if err := m.Run(t.Context(), []string{"-p", "--trust", "--agent-teams", "--explicit-teams", "--teammate-mode", "in-process", "--home", filepath.Join(root, "th"), "--cwd", cwd, "go"}); err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out.String())
	}
	mu.Lock()
	defer mu.Unlock()
	lead, helper := systems["lead"], systems["helper"]
	if helper == "" {
		t.Fatalf("the teammate made no request\n%s", out.String())
	}
	instr := func(s string) string {
		i := strings.Index(s, "<project-instructions>")
		j := strings.Index(s, "</project-instructions>")
		if i < 0 || j < i {
			return ""
		}
		return s[i:j]
	}
	if instr(lead) == "" || instr(lead) != instr(helper) || !strings.Contains(instr(helper), "SHARED-RULE") {
		t.Errorf("the instructions differ:\nlead:\n%s\nteammate:\n%s", instr(lead), instr(helper))
	}
	if !strings.Contains(lead, "# Leading a team") || !strings.HasPrefix(helper, `You are teammate helper in the agent team "same"`) {
		t.Errorf("role prompts: lead %q..., teammate %q...", lead[:60], helper[:60])
	}
}
