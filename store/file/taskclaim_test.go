package file_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/tasklist"
)

// holdTaskLock makes the lock folder of a task as Claude Code's
// proper-lockfile does (a fresh mkdir) and returns the function that
// removes it.
func holdTaskLock(t *testing.T, root, list, id string) (release func()) {
	t.Helper()
	dir := filepath.Join(root, "tasks", list, id+".json.lock")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Error(err)
		}
	}
}

// A claimer passes over a ready task whose lock another writer holds
// (here Claude Code, mid-update) and takes the next ready one at once,
// instead of waiting for the lock; once the lock is gone, the task is
// claimable again in id order.
func TestTaskClaimPassesOverLockedTask(t *testing.T) {
	root := t.TempDir()
	// A lock that would turn stale only after the test's deadline.
	s := ftOpen(t, root, file.Options{LockStale: time.Minute, LockTimeout: 2 * time.Minute})
	ctx := t.Context()
	ftCreateTasks(t, s, "busy", 3)
	l := tasklist.New(s.Tasks(), "busy")
	release := holdTaskLock(t, root, "busy", "1")

	start := time.Now()
	short, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	got, err := l.Claim(short, "alice")
	if err != nil || got.ID == "1" {
		t.Fatalf("Claim(alice) with task 1 locked = %q, %v; want another ready task", got.ID, err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("Claim(alice) with task 1 locked took %v; want it not to wait for the lock", waited)
	}
	task, rev, err := s.Tasks().Get(ctx, "busy", "1")
	if err != nil {
		t.Fatal(err)
	}
	if task.Owner != "" || task.Status != tasklist.StatusPending {
		t.Errorf("task 1 after the claimer passed over it = {Owner %q, Status %q}; want pending and unowned", task.Owner, task.Status)
	}
	task.Owner = "carol"
	if _, err := s.Tasks().TryPut(ctx, "busy", task, rev); !errors.Is(err, tasklist.ErrBusy) {
		t.Errorf("TryPut of task 1 while locked = %v; want ErrBusy", err)
	}
	if _, err := s.Tasks().TryPut(ctx, "busy", task, rev+1); !errors.Is(err, tasklist.ErrConflict) {
		t.Errorf("TryPut of task 1 at a stale revision while locked = %v; want ErrConflict", err)
	}
	release()
	if got, err := l.Claim(ctx, "bob"); err != nil || got.ID != "1" {
		t.Errorf("Claim(bob) after the lock went = %q, %v; want \"1\", the first ready task", got.ID, err)
	}
}

// A claimer that finds every ready task locked waits for the first: if its
// writer leaves it claimable the claimer takes it, and if the writer claims
// it (Claude Code writes the task file in place, under the lock) the
// claimer finds none ready.
func TestTaskClaimWaitsWhenAllLocked(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{LockStale: time.Minute, LockTimeout: 2 * time.Minute})
	ctx := t.Context()
	tests := []struct {
		list    string
		claim   bool // the holder claims the task before it lets go
		wantID  string
		wantErr error
	}{
		{"left-claimable", false, "1", nil},
		{"taken-by-the-holder", true, "", tasklist.ErrNoneReady},
	}
	for _, tt := range tests {
		t.Run(tt.list, func(t *testing.T) {
			ftCreateTasks(t, s, tt.list, 1)
			release := holdTaskLock(t, root, tt.list, "1")
			type result struct {
				task tasklist.Task
				err  error
			}
			done := make(chan result, 1)
			go func() {
				task, err := tasklist.New(s.Tasks(), tt.list).Claim(ctx, "alice")
				done <- result{task, err}
			}()
			select {
			case r := <-done:
				release()
				t.Fatalf("Claim returned %q, %v while the only ready task was locked; want it to wait", r.task.ID, r.err)
			case <-time.After(200 * time.Millisecond):
			}
			if tt.claim {
				path := filepath.Join(root, "tasks", tt.list, "1.json")
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				var task map[string]any
				if err := json.Unmarshal(raw, &task); err != nil {
					t.Fatal(err)
				}
				task["owner"], task["status"] = "claude", "in_progress"
				raw, _ = json.MarshalIndent(task, "", "  ")
				if err := os.WriteFile(path, raw, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			release()
			select {
			case r := <-done:
				if r.task.ID != tt.wantID || !errors.Is(r.err, tt.wantErr) {
					t.Errorf("Claim after the holder let go = %q, %v; want %q, %v", r.task.ID, r.err, tt.wantID, tt.wantErr)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Claim still waiting 10 s after the lock was released")
			}
		})
	}
}
