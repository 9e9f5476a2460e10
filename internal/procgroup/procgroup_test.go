//go:build unix

package procgroup_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/procgroup"
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
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := procgroup.Kill(cmd); err != nil {
		t.Fatalf("Kill = %v", err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if syscall.Kill(pid, 0) != nil || (err == nil && strings.Contains(string(st)[strings.LastIndexByte(string(st), ')'):], ") Z")) {
			break // gone, or a zombie waiting for its new parent
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child %d still runs 5 s after Kill", pid)
		}
	}
	if err := procgroup.Kill(&exec.Cmd{}); err != nil {
		t.Errorf("Kill of a command never started = %v; want nil", err)
	}
}
