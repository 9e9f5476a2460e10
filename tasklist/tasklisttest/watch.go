package tasklisttest

import (
	"context"
	"testing"
	"time"

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
	drain := func() {
		for {
			select {
			case <-kick:
			case <-time.After(50 * time.Millisecond):
				return
			}
		}
	}
	wait := func(what string) {
		t.Helper()
		select {
		case _, open := <-kick:
			if !open {
				t.Fatalf("after %s: the watch channel closed", what)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("after %s: no kick within 10 s", what)
		}
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
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, open := <-kick:
			if !open {
				return
			}
		case <-deadline:
			t.Fatal("the watch channel stayed open 10 s after its context ended")
		}
	}
}
