package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// needGit skips without git, unless CI=true (where .ci/run installs it).
func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not installed; CI must have it")
		}
		t.Skip("git is not installed")
	}
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// Two sub-agents with isolation "worktree" work on the same file in their
// own worktrees: the one that wrote keeps its worktree and branch, and the
// lead reads the branch, path and diffstat; the one that changed nothing
// leaves no trace; the project's own checkout is untouched.
func TestSubAgentWorktrees(t *testing.T) {
	needGit(t)
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	writeDef(t, filepath.Join(proj, "main.go"), "package main\n")
	gitIn(t, proj, "init", "-q", "-b", "main")
	gitIn(t, proj, "add", ".")
	gitIn(t, proj, "commit", "-q", "-m", "first")
	script := filepath.Join(root, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"Agent","input":{"description":"edit","prompt":"EDIT-ANN","name":"ann","isolation":"worktree"}},
   {"name":"Agent","input":{"description":"look","prompt":"LOOK-BOB","name":"bob","isolation":"worktree"}}]}},
 {"match":{"system":"You are troupe,","user":"Changes kept on branch troupe/agents/ann"},"reply":{"text":"LEAD-DONE"}},
 {"match":{"user":"EDIT-ANN","turn":0},"reply":{"tool_calls":[{"name":"Write","input":{"file_path":"main.go","content":"package main\n\n// ann\n"}}]}},
 {"match":{"tool_result":"Write"},"reply":{"text":"ANN-DONE"}},
 {"match":{"user":"LOOK-BOB","turn":0},"reply":{"tool_calls":[{"name":"Read","input":{"file_path":"main.go"}}]}},
 {"match":{"tool_result":"Read"},"reply":{"text":"BOB-DONE"}}
]}`)
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, HomeDir: func() (string, error) { return root, nil }}
	err := m.Run(t.Context(), []string{"--home", filepath.Join(root, "home"), "-p", "--trust", "--allowedTools", "Agent,Write,Read", "--cwd", proj,
		"--provider", "scripted", "--script", script, "--output-format", "stream-json", "go"})
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out.String())
	}
	ann := filepath.Join(root, "proj-worktrees", "agents", "ann")
	for _, want := range []string{"LEAD-DONE", "ann", "main.go | 2 ++", "had no changes: removed with its branch troupe/agents/bob"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ann, "main.go")); string(b) != "package main\n\n// ann\n" {
		t.Errorf("ann's worktree main.go = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "main.go")); string(b) != "package main\n" {
		t.Errorf("the project's main.go = %q; want it untouched", b)
	}
	if _, err := os.Stat(filepath.Join(root, "proj-worktrees", "agents", "bob")); !os.IsNotExist(err) {
		t.Errorf("bob's worktree is still there: %v", err)
	}
	if got := gitIn(t, proj, "branch", "--list", "--format=%(refname:short)", "troupe/*"); got != "troupe/agents/ann" {
		t.Errorf("branches = %q; want only troupe/agents/ann", got)
	}
}

// Outside a git repository, isolation "worktree" is refused with the
// reason, and nothing is made.
func TestSubAgentWorktreeNotRepo(t *testing.T) {
	needGit(t)
	root := t.TempDir()
	proj := filepath.Join(root, "plain")
	writeDef(t, filepath.Join(proj, "a.txt"), "x")
	script := filepath.Join(root, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"turn":0},"reply":{"tool_calls":[{"name":"Agent","input":{"description":"edit","prompt":"P","isolation":"worktree"}}]}},
 {"match":{"user":"not a git repository"},"reply":{"text":"LEAD-SAW-IT"}}
]}`)
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, HomeDir: func() (string, error) { return root, nil }}
	if err := m.Run(t.Context(), []string{"--home", filepath.Join(root, "home"), "-p", "--trust", "--allowedTools", "Agent", "--cwd", proj,
		"--provider", "scripted", "--script", script, "go"}); err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "LEAD-SAW-IT") {
		t.Errorf("output:\n%s", out.String())
	}
	if ents, _ := os.ReadDir(root); len(ents) != 3 { // plain, script.json, home
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("the folder beside the project holds %v; want nothing new", names)
	}
}

// --worktrees: two in-process teammates edit the same file, each in its
// own worktree, without clashing; TeamDelete removes the clean worktree
// and keeps (and reports) the changed one.
func TestTeamWorktrees(t *testing.T) {
	needGit(t)
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	writeDef(t, filepath.Join(proj, "main.go"), "package main\n")
	gitIn(t, proj, "init", "-q", "-b", "main")
	gitIn(t, proj, "add", ".")
	gitIn(t, proj, "commit", "-q", "-m", "first")
	script := filepath.Join(root, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"wt"}},
   {"name":"Agent","input":{"description":"edit","name":"ann","prompt":"EDIT-ANN"}},
   {"name":"Agent","input":{"description":"edit too","name":"bob","prompt":"EDIT-BOB"}},
   {"name":"Agent","input":{"description":"look","name":"cid","prompt":"LOOK-CID"}}]}},
 {"match":{"system":"You are troupe,","tool_result":"TeamDelete"},"reply":{"text":"LEAD-DONE"},"repeat":true},
 {"match":{"system":"You are troupe,","user":"idle"},"reply":{"tool_calls":[{"name":"TeamDelete","input":{}}]},"repeat":true},
 {"match":{"system":"You are troupe,"},"reply":{"text":"WAITING"},"repeat":true},
 {"match":{"system":"teammate ann","turn":0},"reply":{"tool_calls":[{"name":"Write","input":{"file_path":"main.go","content":"package main\n\n// ann\n"}}]}},
 {"match":{"system":"teammate bob","turn":0},"reply":{"tool_calls":[{"name":"Write","input":{"file_path":"main.go","content":"package main\n\n// bob\n// bob\n"}}]}},
 {"match":{"system":"teammate cid","turn":0},"reply":{"tool_calls":[{"name":"Read","input":{"file_path":"main.go"}}]}},
 {"match":{"system":"teammate"},"reply":{"text":"MATE-DONE"},"repeat":true}
]}`)
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, HomeDir: func() (string, error) { return root, nil }}
	err := m.Run(t.Context(), []string{"--home", filepath.Join(root, "home"), "-p", "--trust", "--agent-teams", "--explicit-teams", "--teammate-mode", "in-process", "--worktrees",
		"--allowedTools", "Agent,Write,Read", "--cwd", proj, "--provider", "scripted", "--script", script, "--output-format", "stream-json", "go"})
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out.String())
	}
	trees := filepath.Join(root, "proj-worktrees", "wt")
	for name, want := range map[string]string{"ann": "// ann\n", "bob": "// bob\n// bob\n"} {
		if b, _ := os.ReadFile(filepath.Join(trees, name, "main.go")); string(b) != "package main\n\n"+want {
			t.Errorf("%s's main.go = %q", name, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "main.go")); string(b) != "package main\n" {
		t.Errorf("the project's main.go = %q; want it untouched", b)
	}
	if _, err := os.Stat(filepath.Join(trees, "cid")); !os.IsNotExist(err) {
		t.Errorf("cid's clean worktree is still there: %v", err)
	}
	if got := gitIn(t, proj, "branch", "--list", "--format=%(refname:short)", "troupe/*"); got != "troupe/wt/ann\ntroupe/wt/bob" {
		t.Errorf("branches = %q; want ann's and bob's only", got)
	}
	if !regexp.MustCompile(`is idle[^<]*Changes kept on branch troupe/wt/(ann|bob)`).MatchString(out.String()) {
		t.Errorf("no idle notification tells a worktree's changes:\n%s", out.String())
	}
	for _, want := range []string{"Changes kept on branch troupe/wt/ann in worktree " + filepath.Join(trees, "ann"), "main.go | 2 ++"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// A coordinator's worker with isolation "worktree" writes in its own
// worktree; the coordinator's notification names the branch and diffstat.
func TestCoordinatorWorkerWorktree(t *testing.T) {
	needGit(t)
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	writeDef(t, filepath.Join(proj, "main.go"), "package main\n")
	gitIn(t, proj, "init", "-q", "-b", "main")
	gitIn(t, proj, "add", ".")
	gitIn(t, proj, "commit", "-q", "-m", "first")
	script := filepath.Join(root, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"user":"EDIT-W","turn":0},"reply":{"tool_calls":[{"name":"Write","input":{"file_path":"main.go","content":"package main\n\n// worker\n"}}]}},
 {"match":{"tool_result":"Write"},"reply":{"text":"W-DONE"}},
 {"match":{"turn":0},"reply":{"tool_calls":[{"name":"Agent","input":{"description":"edit","prompt":"EDIT-W","isolation":"worktree"}}]}},
 {"match":{"user":"Changes kept on branch troupe/workers/"},"reply":{"text":"LEAD-DONE"}},
 {"match":{},"reply":{"text":"WAITING"},"repeat":true}
]}`)
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, HomeDir: func() (string, error) { return root, nil }}
	if err := m.Run(t.Context(), []string{"--home", filepath.Join(root, "home"), "-p", "--trust", "--coordinator", "--allowedTools", "Write", "--cwd", proj,
		"--provider", "scripted", "--script", script, "go"}); err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "LEAD-DONE") {
		t.Errorf("the coordinator was not told of the kept worktree:\n%s", out.String())
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "main.go")); string(b) != "package main\n" {
		t.Errorf("the project's main.go = %q; want it untouched", b)
	}
	matches, _ := filepath.Glob(filepath.Join(root, "proj-worktrees", "workers", "*", "main.go"))
	if len(matches) != 1 {
		t.Fatalf("workers' worktrees: %v", matches)
	}
	if b, _ := os.ReadFile(matches[0]); string(b) != "package main\n\n// worker\n" {
		t.Errorf("the worker's main.go = %q", b)
	}
}
