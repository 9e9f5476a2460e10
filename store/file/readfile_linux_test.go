package file_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/tasklist"
)

// Reading a task leaves its access time alone: under relatime the first
// read of each rewritten file would otherwise write its inode (a journal
// update that waits behind every other writer's fsync).
func TestTaskReadKeepsAccessTime(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	task, _, err := s.Tasks().Create(ctx, "atime", tasklist.Task{Subject: "x"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "tasks", "atime", task.ID+".json")
	old := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, time.Now()); err != nil { // atime before mtime: relatime would update it
		t.Fatal(err)
	}
	if _, _, err := s.Tasks().Get(ctx, "atime", task.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Tasks().List(ctx, "atime"); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	if got := time.Unix(st.Atim.Unix()); !got.Equal(old) {
		t.Errorf("access time after Get and List = %v; want it left at %v", got, old)
	}
}
