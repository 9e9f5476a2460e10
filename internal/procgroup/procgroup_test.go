//go:build unix

package procgroup_test

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/procgroup"
	"github.com/troupe-dev/troupe/internal/proctest"
)

// A background child of a command in its own group ends with Kill, after
// the command itself has exited.
func TestKillEndsWhatTheCommandLeft(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command("sh", "-c", "sleep 60 & echo $! > "+pidFile)
	procgroup.Set(cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := proctest.PID(t, pidFile)
	if err := procgroup.Kill(cmd); err != nil {
		t.Fatalf("Kill = %v", err)
	}
	if !proctest.WaitGone(pid, 5*time.Second) {
		t.Fatalf("the child %d still runs 5 s after Kill", pid)
	}
	if err := procgroup.Kill(&exec.Cmd{}); err != nil {
		t.Errorf("Kill of a command never started = %v; want nil", err)
	}
}
