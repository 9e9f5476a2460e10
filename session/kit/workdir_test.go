package kit_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/sessiontool"
)

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestWorkdir: EnterWorktree moves the lead's folder tools and approver
// into a new worktree on worktree/<name>; ExitWorktree remove refuses to
// lose uncommitted changes or commits on no other branch, keep leaves
// them, discard_changes says what it threw away.
func TestWorkdir(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	home := filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(filepath.Join(home, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, home, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(home, "sub", "a.txt"), []byte("a\n"), 0o644)
	gitIn(t, home, "add", ".")
	gitIn(t, home, "commit", "-q", "-m", "first")
	cwd := filepath.Join(home, "sub")
	reg := task.New(task.Config{Dir: t.TempDir(), PollInterval: -1})
	base := &approve.Approver{Mode: permission.ModeAcceptEdits, Cwd: cwd}
	lead := swarm.NewApprover(base)
	wd := kit.NewWorkdir(cwd, "", func(dir string) map[string]tool.Tool { return kit.FolderToolsIn(dir, base, reg) })
	wd.SetApprover(lead)
	var list []tool.Tool
	for _, n := range kit.FolderTools {
		list = append(list, kit.FolderToolsIn(cwd, base, reg)[n])
	}
	tools, err := tool.NewRegistry(wd.Follow(list)...)
	if err != nil {
		t.Fatal(err)
	}
	enter, exit := sessiontool.NewWorktreeTools(wd)
	run := func(tl tool.Tool, in string) tool.Result {
		t.Helper()
		res, err := tl.Run(t.Context(), tool.Call{Input: json.RawMessage(in)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	named := func(n string) tool.Tool { tl, _ := tools.Get(n); return tl }
	write := func(path string) agent.Verdict {
		v, err := lead.Approve(t.Context(), agent.Request{Tool: "Write", Input: json.RawMessage(`{"file_path":"` + path + `","content":"x"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	if res := run(exit, `{"action":"keep"}`); !res.IsError || !strings.Contains(res.Content, "not in a worktree") {
		t.Errorf("exit before enter = %+v", res)
	}
	if res := run(enter, `{"name":"bad name"}`); !res.IsError || !strings.Contains(res.Content, "cannot be part of a branch name") {
		t.Errorf("bad name = %+v", res)
	}
	res := run(enter, `{"name":"feature"}`)
	tree := filepath.Join(filepath.Dir(home), "proj-worktrees", "worktree", "feature")
	if res.IsError || !strings.Contains(res.Content, "on the new branch worktree/feature") || !strings.Contains(res.Content, filepath.Join(tree, "sub")) {
		t.Fatalf("enter = %+v", res)
	}
	if wd.Dir() != filepath.Join(tree, "sub") {
		t.Errorf("Dir() = %s", wd.Dir())
	}
	if res := run(enter, `{}`); !res.IsError || !strings.Contains(res.Content, "already in worktree") {
		t.Errorf("enter twice = %+v", res)
	}
	if res := run(named("Write"), `{"file_path":"b.txt","content":"b\n"}`); res.IsError {
		t.Fatal(res.Content)
	}
	if _, err := os.Stat(filepath.Join(tree, "sub", "b.txt")); err != nil {
		t.Errorf("a relative Write did not land in the worktree: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cwd, "b.txt")); err == nil {
		t.Error("a Write in the worktree reached the main checkout")
	}
	if res := run(named("Bash"), `{"command":"pwd && git branch --show-current"}`); !strings.Contains(res.Content, filepath.Join(tree, "sub")) || !strings.Contains(res.Content, "worktree/feature") {
		t.Errorf("Bash in the worktree = %q", res.Content)
	}
	if v := write(filepath.Join(tree, "sub", "c.txt")); !v.Allow {
		t.Errorf("acceptEdits in the worktree refuses a write there: %s", v.Reason)
	}
	if v := write(filepath.Join(cwd, "c.txt")); v.Allow {
		t.Error("from the worktree, a write to the main checkout is allowed without asking")
	}

	var unsaved *sessiontool.UnsavedError
	if res := run(exit, `{"action":"remove"}`); !res.IsError || !strings.Contains(res.Content, "1 uncommitted change(s) (?? sub/b.txt)") || !strings.Contains(res.Content, "discard_changes: true") {
		t.Errorf("remove with an uncommitted file = %+v", res)
	}
	if _, err := wd.Exit(t.Context(), true, false); !errors.As(err, &unsaved) || wd.Dir() != filepath.Join(tree, "sub") {
		t.Errorf("refused removal: %v; the session is in %s", err, wd.Dir())
	}
	gitIn(t, tree, "add", ".")
	gitIn(t, tree, "commit", "-q", "-m", "b")
	if res := run(exit, `{"action":"remove"}`); !res.IsError || !strings.Contains(res.Content, "1 commit(s) on branch worktree/feature that no other branch has") {
		t.Errorf("remove with an unmerged commit = %+v", res)
	}
	if res := run(exit, `{"action":"keep","discard_changes":true}`); !res.IsError {
		t.Errorf("keep with discard_changes = %+v", res)
	}
	if res := run(exit, `{"action":"keep"}`); res.IsError || !strings.Contains(res.Content, "Back in "+cwd) || !strings.Contains(res.Content, "is kept on branch worktree/feature (1 commit(s)") {
		t.Errorf("keep = %+v", res)
	}
	if wd.Dir() != cwd || write(filepath.Join(cwd, "c.txt")).Allow == false {
		t.Errorf("after keep: in %s, a write at home allowed: %v", wd.Dir(), write(filepath.Join(cwd, "c.txt")).Allow)
	}
	if res := run(named("Read"), `{"file_path":"a.txt"}`); res.IsError {
		t.Errorf("Read at home after exit = %+v", res)
	}
	if got := gitIn(t, home, "branch", "--list", "worktree/feature"); got == "" {
		t.Error("keep deleted the branch")
	}

	// Merged commits are on another branch: remove goes through.
	gitIn(t, home, "merge", "-q", "--ff-only", "worktree/feature")
	gitIn(t, home, "worktree", "remove", tree)
	gitIn(t, home, "branch", "-d", "worktree/feature")
	if res := run(enter, `{"name":"feature"}`); res.IsError {
		t.Fatal(res.Content)
	}
	if res := run(exit, `{"action":"remove"}`); res.IsError || !strings.Contains(res.Content, "Removed worktree") {
		t.Errorf("remove of a clean worktree = %+v", res)
	}
	// discard_changes removes and says what it discarded.
	run(enter, `{"name":"scratch"}`)
	scratch := filepath.Join(filepath.Dir(home), "proj-worktrees", "worktree", "scratch")
	os.WriteFile(filepath.Join(scratch, "x.txt"), []byte("x"), 0o644)
	gitIn(t, scratch, "add", ".")
	gitIn(t, scratch, "commit", "-q", "-m", "x")
	tip := gitIn(t, scratch, "rev-parse", "HEAD")
	res = run(exit, `{"action":"remove","discard_changes":true}`)
	if res.IsError || !strings.Contains(res.Content, "Discarded 1 commit(s) on no other branch, tip "+tip) {
		t.Errorf("remove with discard = %+v", res)
	}
	if _, err := os.Stat(scratch); err == nil {
		t.Error("the discarded worktree is still there")
	}
}
