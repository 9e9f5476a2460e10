package bash

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/internal/gitenv"
	"github.com/troupe-dev/troupe/internal/gittest"
)

// A project ships a git directory as plain files whose config names an
// fsmonitor program. However a person let the model reach it (git -C,
// --git-dir, from a script), the command runs but the program does not.
func TestShippedGitDirRunsNothing(t *testing.T) {
	dir := t.TempDir()
	marker := gittest.EvilRepo(t, dir, "evil")
	plain := exec.Command("git", "-C", "evil", "status")
	plain.Dir = dir
	plain.Run()
	if !gittest.Ran(marker) {
		t.Fatal("plain git -C evil status did not run the fsmonitor program: this git does not show the attack")
	}
	os.Remove(marker)
	tl := newTool(t, Config{Dir: dir})
	for _, c := range []string{"git -C evil status", "git --git-dir=evil --work-tree=. status", "sh -c 'cd evil && git status'"} {
		res := mustRun(t, tl, cmd(c))
		if gittest.Ran(marker) {
			t.Fatalf("%s ran the shipped fsmonitor program:\n%s", c, res.Content)
		}
	}
}

// The repository's hooks do not run for the model's git commit, unless
// troupe runs with TROUPE_GIT_HOOKS=1.
func TestGitHooksOff(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "hook-ran")
	for _, args := range [][]string{{"init", "-q"}} {
		c := exec.Command("git", args...)
		c.Dir = dir
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", args, err, out)
		}
	}
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	commit := cmd("git -c user.name=t -c user.email=t@t.invalid commit -q --allow-empty -m x")
	t.Setenv(gitenv.HooksVar, "")
	res := mustRun(t, newTool(t, Config{Dir: dir}), commit)
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the pre-commit hook ran:\n%s", res.Content)
	}
	if strings.Contains(res.Content, "fatal") {
		t.Fatalf("commit failed:\n%s", res.Content)
	}
	t.Setenv(gitenv.HooksVar, "1")
	res = mustRun(t, newTool(t, Config{Dir: dir}), commit)
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("with %s=1 the pre-commit hook did not run:\n%s", gitenv.HooksVar, res.Content)
	}
}
