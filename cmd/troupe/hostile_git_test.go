package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/internal/gittest"
)

// gitProject makes a cloned project: a repository with one commit that
// holds evil, a git directory shipped as plain files whose config names
// an fsmonitor program. It returns the project and the program's marker.
func gitProject(t *testing.T) (dir, marker string) {
	t.Helper()
	dir = t.TempDir()
	marker = gittest.EvilRepo(t, dir, "evil")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", "a.txt"}, {"-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-q", "-m", "one"}} {
		c := exec.Command("git", args...)
		c.Dir = dir
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", args, err, out)
		}
	}
	return dir, marker
}

// The attack of a cloned project's git directory, run end to end by a
// scripted model: git -C evil status asks (so is denied headless) in every
// mode, whatever allow rule names git; and when a person allows it, it
// runs without running the folder's fsmonitor program. Writing a git
// directory asks in acceptEdits mode.
func TestHostileShippedGitDir(t *testing.T) {
	const script = `{"model": "scripted-git", "turns": [
  {"match": {"turn": 0}, "reply": {"text": "Checking.", "tool_calls": [
    {"id": "toolu_git", "name": "Bash", "input": {"command": "git -C evil status"}},
    {"id": "toolu_gitdir", "name": "Bash", "input": {"command": "git --git-dir=evil --work-tree=. status"}},
    {"id": "toolu_head", "name": "Write", "input": {"file_path": "made/HEAD", "content": "ref: refs/heads/main\n"}},
    {"id": "toolu_config", "name": "Write", "input": {"file_path": "evil/config", "content": "[core]\n\tfsmonitor = x\n"}},
    {"id": "toolu_redirect", "name": "Bash", "input": {"command": "echo 'ref: refs/heads/main' > made2/HEAD"}}]}},
  {"match": {"tool_result": "Bash"}, "reply": {"text": "Done."}}]}`
	scriptFile := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(scriptFile, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	allow := writeHook(t, `cat >/dev/null; echo '{"behavior":"allow"}'`)
	tests := []struct {
		name    string
		args    []string
		allowed bool // a person allowed every call
	}{
		{name: "default", args: []string{"--permission-mode", "default"}},
		{name: "acceptEdits", args: []string{"--permission-mode", "acceptEdits"}},
		{name: "plan", args: []string{"--permission-mode", "plan"}},
		{name: "acceptEdits with Bash(git:*)", args: []string{"--permission-mode", "acceptEdits", "--allowedTools", "Bash(git:*),Bash(git status:*)"}},
		{name: "a person allows", args: []string{"--permission-prompt-command", allow}, allowed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, marker := gitProject(t)
			args := append([]string{"-p", "--trust", "--provider", "scripted", "--script", scriptFile, "--output-format", "stream-json"}, tt.args...)
			out, err := headlessRun(t, dir, nil, "", append(args, "what is the state")...)
			if err != nil {
				t.Fatalf("troupe -p: %v\n%s", err, out)
			}
			if gittest.Ran(marker) {
				t.Fatalf("the shipped fsmonitor program ran:\n%s", out)
			}
			for _, id := range []string{"toolu_git", "toolu_gitdir", "toolu_head", "toolu_config", "toolu_redirect"} {
				res, ok := toolResult(t, out, id)
				if !ok {
					t.Fatalf("no tool result for %s in:\n%s", id, out)
				}
				if denied := strings.Contains(res, "Permission to use"); denied == tt.allowed {
					t.Errorf("%s: result %q; want denied %v", id, res, !tt.allowed)
				}
			}
			if tt.allowed {
				if res, _ := toolResult(t, out, "toolu_git"); !strings.Contains(res, "safe.bareRepository") {
					t.Errorf("allowed git -C evil status: %q; want git to refuse the bare repository", res)
				}
				return
			}
			for _, f := range []string{"made/HEAD", "made2/HEAD"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					t.Errorf("%s was written", f)
				}
			}
		})
	}
}
