package tasklisttest

import (
	"context"
	"testing"

	"github.com/troupe-dev/troupe/internal/kick/kicktest"
	"github.com/troupe-dev/troupe/tasklist"
)

// testWatch checks a store that implements tasklist.Watcher: a create, an
// update and a delete each kick a watcher of the list, and a change of
// another list does not have to. Stores without Watch skip it.
func testWatch(t *testing.T, s tasklist.Store) {
	w, ok := s.(tasklist.Watcher)
	if !ok {
		t.Skip("the store does not implement tasklist.Watcher")
	}
	ctx, cancel := context.WithCancel(context.Background())
	kick, err := w.Watch(ctx, "watched")
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	drain := func() { kicktest.Drain(kick) }
	wait := func(what string) {
		t.Helper()
		kicktest.Wait(t, kick, what)
	}
	task, rev := mustCreate(t, s, "watched", pending("one"))
	wait("create")
	drain()
	task.Status = tasklist.StatusInProgress
	rev, err = s.Put(ctx, "watched", task, rev)
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	wait("put")
	drain()
	if err := s.Delete(ctx, "watched", task.ID, rev); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	wait("delete")
	cancel()
	kicktest.Closes(t, kick)
}
