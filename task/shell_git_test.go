package task

import (
	"testing"

	"github.com/troupe-dev/troupe/internal/gittest"
)

// A background shell's git does not run the fsmonitor program of a git
// directory the project ships (internal/gitenv).
func TestShellGitShippedFsmonitor(t *testing.T) {
	dir := t.TempDir()
	marker := gittest.EvilRepo(t, dir, "evil")
	r := shellRegistry(t, Config{})
	sub := r.Subscribe()
	if _, err := r.StartShell(ShellSpec{Command: "git -C evil status; git --git-dir=evil --work-tree=. status", Dir: dir}); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, sub, EventTerminated)
	if gittest.Ran(marker) {
		t.Fatal("the background shell's git ran the shipped fsmonitor program")
	}
}
