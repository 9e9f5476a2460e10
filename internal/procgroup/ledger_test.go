//go:build linux

package procgroup_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/procgroup"
	"github.com/troupe-dev/troupe/internal/proctest"
)

// ownerEnv makes the test binary an owner process (TestMain): it opens a
// ledger in the folder named, starts `sleep` in a group of its own with a
// background child, records the group, writes the child's pid to a file
// and waits to be killed.
const ownerEnv = "PROCGROUP_TEST_OWNER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(ownerEnv); dir != "" {
		l, err := procgroup.Open(dir, "worker@t", "s1")
		if err != nil {
			os.Exit(3)
		}
		procgroup.Keep(l)
		cmd := exec.Command("sh", "-c", "sleep 300 & echo $! > "+filepath.Join(dir, "child")+"; wait")
		procgroup.Set(cmd)
		if cmd.Start() != nil {
			os.Exit(4)
		}
		procgroup.Started(cmd)
		os.WriteFile(filepath.Join(dir, "ready"), []byte("1"), 0o600)
		cmd.Wait()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startOwner runs an owner process, returns it and its background child's
// pid once the group is recorded.
func startOwner(t *testing.T, dir string) (*exec.Cmd, int) {
	t.Helper()
	owner := exec.Command(os.Args[0])
	owner.Env = append(os.Environ(), ownerEnv+"="+dir)
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { owner.Process.Kill(); owner.Wait() })
	child := proctest.PID(t, filepath.Join(dir, "child"))
	t.Cleanup(func() { syscall.Kill(child, syscall.SIGKILL) })
	proctest.PID(t, filepath.Join(dir, "ready"))
	return owner, child
}

// The groups a SIGKILLed owner recorded are killed by Reap, and its
// ledger removed; a live owner's are left alone.
func TestReapKillsWhatADeadOwnerLeft(t *testing.T) {
	dir := t.TempDir()
	owner, child := startOwner(t, dir)
	if got, err := procgroup.Reap(dir, procgroup.ReapOptions{}); err != nil || len(got) != 0 {
		t.Fatalf("Reap with the owner alive = %v, %v; want nothing", got, err)
	}
	if !proctest.Alive(child) {
		t.Fatal("Reap killed the group of a live owner")
	}
	owner.Process.Kill()
	owner.Wait()
	if !proctest.Alive(child) {
		t.Fatal("the child ended with its owner: the test proves nothing")
	}
	got, err := procgroup.Reap(dir, procgroup.ReapOptions{})
	if err != nil || len(got) != 1 || got[0].Owner.Agent != "worker@t" || got[0].Groups != 1 {
		t.Fatalf("Reap = %+v, %v; want worker@t's one group", got, err)
	}
	if !proctest.WaitGone(child, 5*time.Second) {
		t.Fatalf("the dead owner's child %d still runs after Reap", child)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*"+procgroup.Ext)); len(m) != 0 {
		t.Errorf("ledgers left after Reap: %v", m)
	}
}

// Reap with Kill ends a selected owner that still runs, then its groups;
// Match leaves the others.
func TestReapKillsASelectedOwner(t *testing.T) {
	dir := t.TempDir()
	_, child := startOwner(t, dir)
	got, err := procgroup.Reap(dir, procgroup.ReapOptions{Match: func(o procgroup.Owner) bool { return o.Agent == "other@t" }, Kill: true})
	if err != nil || len(got) != 0 || !proctest.Alive(child) {
		t.Fatalf("Reap of another agent = %v, %v (child alive %v); want nothing done", got, err, proctest.Alive(child))
	}
	got, err = procgroup.Reap(dir, procgroup.ReapOptions{Match: func(o procgroup.Owner) bool { return o.Agent == "worker@t" }, Wait: 10 * time.Millisecond, Kill: true})
	if err != nil || len(got) != 1 {
		t.Fatalf("Reap = %v, %v; want worker@t reaped", got, err)
	}
	if !proctest.WaitGone(child, 5*time.Second) {
		t.Fatalf("the child %d still runs", child)
	}
}

// A recorded group whose leader's pid now belongs to a later process is
// not killed; a ledger that cannot be read, of a process gone, is removed
// with an error saying so.
func TestReapLeavesAReusedPid(t *testing.T) {
	dir := t.TempDir()
	other := exec.Command("sleep", "300")
	procgroup.Set(other)
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { procgroup.Kill(other); other.Wait() })
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	gone := dead.Process.Pid
	ledger, _ := json.Marshal(map[string]any{"owner": map[string]any{"pid": gone, "start": 1},
		"groups": []map[string]any{{"pgid": other.Process.Pid, "start": 1}}})
	writeFile(t, filepath.Join(dir, strconv.Itoa(gone)+procgroup.Ext), ledger)
	writeFile(t, filepath.Join(dir, strconv.Itoa(gone+100000000)+procgroup.Ext), []byte("{torn"))
	got, err := procgroup.Reap(dir, procgroup.ReapOptions{})
	if len(got) != 1 {
		t.Fatalf("Reap = %v; want the dead owner's ledger", got)
	}
	if err == nil {
		t.Error("Reap of a torn ledger gave no error")
	}
	if !proctest.Alive(other.Process.Pid) {
		t.Error("Reap killed a group whose leader's pid was given to a later process")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*"+procgroup.Ext)); len(m) != 0 {
		t.Errorf("ledgers left after Reap: %v", m)
	}
}

// Close kills what is still recorded and removes the file.
func TestCloseKillsWhatIsLeft(t *testing.T) {
	dir := t.TempDir()
	l, err := procgroup.Open(dir, "", "s")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", "sleep 300 & echo $! > "+filepath.Join(dir, "child"))
	procgroup.Set(cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if err := l.Add(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	child := proctest.PID(t, filepath.Join(dir, "child"))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if !proctest.WaitGone(child, 5*time.Second) {
		t.Fatalf("the child %d still runs after Close", child)
	}
	if _, err := os.Stat(l.Path()); !os.IsNotExist(err) {
		t.Errorf("the ledger is still there: %v", err)
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
