package file_test

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/procgroup"
	"github.com/troupe-dev/troupe/peer"
	"github.com/troupe-dev/troupe/store/file"
)

func liveEntry(id string) peer.Entry {
	host, _ := os.Hostname()
	me := procgroup.ProcessOf(os.Getpid())
	return peer.Entry{ID: id, Name: id, Folder: "/w", Host: host, PID: me.PID, Start: me.Start, Kind: peer.KindPrint,
		Started: time.Unix(100, 0).UTC(), State: peer.StateIdle, Peers: true}
}

func TestSessionsPublishListRemove(t *testing.T) {
	home := t.TempDir()
	reg := file.NewSessions(home)
	a, b := liveEntry("a1"), liveEntry("b2")
	b.Started = a.Started.Add(time.Second)
	for _, e := range []peer.Entry{b, a} {
		if err := reg.Publish(t.Context(), e); err != nil {
			t.Fatalf("Publish(%s) = %v", e.ID, err)
		}
	}
	fi, err := os.Stat(filepath.Join(home, "sessions", "live", "a1.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("entry file: %v %v; want 0600", fi, err)
	}
	if di, _ := os.Stat(reg.Dir()); di.Mode().Perm() != 0o700 {
		t.Errorf("registry folder mode %v; want 0700", di.Mode().Perm())
	}
	got, err := reg.List(t.Context())
	if err != nil || len(got) != 2 || got[0].ID != "a1" || got[1].ID != "b2" {
		t.Fatalf("List = %+v, %v; want a1 then b2", got, err)
	}
	if err := reg.Remove(t.Context(), "a1"); err != nil {
		t.Fatal(err)
	}
	if err := reg.Remove(t.Context(), "a1"); err != nil {
		t.Fatalf("Remove twice = %v", err)
	}
	if got, _ := reg.List(t.Context()); len(got) != 1 || got[0].ID != "b2" {
		t.Fatalf("List after Remove = %+v", got)
	}
	if err := reg.Publish(t.Context(), liveEntry("../x")); err == nil {
		t.Error("Publish with a path in the id succeeded")
	}
}

// A dead process's entry and socket are swept; so is one whose pid now
// belongs to a later process (start time differs).
func TestSessionsSweepDead(t *testing.T) {
	home := t.TempDir()
	reg := file.NewSessions(home)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := liveEntry("dead")
	dead.PID, dead.Start = cmd.Process.Pid, 1
	sockDir, err := os.MkdirTemp("", "sw")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	dead.Socket = filepath.Join(sockDir, "dead.sock")
	ln, err := net.Listen("unix", dead.Socket)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	reused := liveEntry("reused")
	reused.Start++ // our pid, another start: the session's process is gone
	live := liveEntry("live")
	var wg sync.WaitGroup
	for _, e := range []peer.Entry{dead, reused, live} {
		wg.Go(func() {
			if err := reg.Publish(t.Context(), e); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := reg.List(t.Context())
	if err != nil || len(got) != 1 || got[0].ID != "live" {
		t.Fatalf("List = %+v, %v; want only live", got, err)
	}
	for _, id := range []string{"dead", "reused"} {
		if _, err := os.Stat(filepath.Join(reg.Dir(), id+".json")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s entry not swept: %v", id, err)
		}
	}
	if _, err := os.Lstat(dead.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dead session's socket not swept: %v", err)
	}
}
