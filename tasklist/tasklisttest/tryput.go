package tasklisttest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/troupe-dev/troupe/tasklist"
)

// testTryPutCompareAndSwap checks that a store's TryPut, where it has one,
// is the same compare-and-swap as Put when nobody else is writing: List.Claim
// claims through it.
func testTryPutCompareAndSwap(t *testing.T, s tasklist.Store) {
	tp, ok := s.(tasklist.TryPutter)
	if !ok {
		t.Skipf("%T has no TryPut (its Put never waits for another writer)", s)
	}
	ctx := t.Context()
	orig, rev1 := mustCreate(t, s, "l", pending("x"))
	next := orig.Clone()
	next.Owner, next.Status = "alice", tasklist.StatusInProgress
	rev2, err := tp.TryPut(ctx, "l", next, rev1)
	if err != nil {
		t.Fatalf("TryPut with the current revision and no other writer error: %v", err)
	}
	if rev2 == rev1 || rev2 == 0 {
		t.Errorf("TryPut revision = %d; want non-zero and different from %d", rev2, rev1)
	}
	rival := orig.Clone()
	rival.Owner, rival.Status = "bob", tasklist.StatusInProgress
	if _, err := tp.TryPut(ctx, "l", rival, rev1); !errors.Is(err, tasklist.ErrConflict) {
		t.Errorf("TryPut with a stale revision error = %v; want ErrConflict", err)
	}
	if got, rev := mustGet(t, s, "l", orig.ID); got.Owner != "alice" || rev != rev2 {
		t.Errorf("after a refused TryPut, Get = (owner %q, rev %d); want (\"alice\", %d)", got.Owner, rev, rev2)
	}
	ghost := pending("ghost")
	ghost.ID = "42"
	if _, err := tp.TryPut(ctx, "l", ghost, rev2); !errors.Is(err, tasklist.ErrNotFound) {
		t.Errorf("TryPut of absent task 42 error = %v; want ErrNotFound", err)
	}
	if ids := listIDs(t, s, "l"); !slices.Equal(ids, []string{"1"}) {
		t.Errorf("after TryPut of an absent task, List = %v; want [1]", ids)
	}
}

// busyStore makes the tasks in busy look as if another user were writing
// them: its TryPut returns ErrBusy for them. It records the ids of the
// Puts (writes that wait for such a writer) made through it.
type busyStore struct {
	tasklist.Store

	mu     sync.Mutex
	busy   map[string]bool // guarded by mu
	waited []string        // guarded by mu
}

func (b *busyStore) setBusy(ids ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.busy = map[string]bool{}
	for _, id := range ids {
		b.busy[id] = true
	}
	b.waited = nil
}

func (b *busyStore) TryPut(ctx context.Context, list string, t tasklist.Task, prev tasklist.Revision) (tasklist.Revision, error) {
	b.mu.Lock()
	busy := b.busy[t.ID]
	b.mu.Unlock()
	if busy {
		return 0, fmt.Errorf("task %s: %w", t.ID, tasklist.ErrBusy)
	}
	if tp, ok := b.Store.(tasklist.TryPutter); ok {
		return tp.TryPut(ctx, list, t, prev)
	}
	return b.Store.Put(ctx, list, t, prev)
}

func (b *busyStore) Put(ctx context.Context, list string, t tasklist.Task, prev tasklist.Revision) (tasklist.Revision, error) {
	b.mu.Lock()
	b.waited = append(b.waited, t.ID)
	b.mu.Unlock()
	return b.Store.Put(ctx, list, t, prev)
}

func (b *busyStore) waits() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.waited)
}

// testClaimPassesOverBusy checks what Claim relies on from a TryPutter: a
// claimer passes over a task that someone is writing and takes another
// ready one without waiting; only when every ready task is busy does it
// wait for the first, and it takes that one if the writer left it
// claimable.
func testClaimPassesOverBusy(t *testing.T, s tasklist.Store) {
	ctx := t.Context()
	b := &busyStore{Store: s}
	l := tasklist.New(b, listName)
	for i := range 3 {
		mk(t, l, tasklist.Draft{Subject: fmt.Sprint("task ", i+1)})
	}
	b.setBusy("1")
	got, err := l.Claim(ctx, "alice")
	if err != nil || got.ID == "1" || got.Owner != "alice" {
		t.Fatalf("Claim(alice) with task 1 busy = {ID %q, Owner %q}, %v; want another task, owned by alice", got.ID, got.Owner, err)
	}
	if w := b.waits(); len(w) > 0 {
		t.Errorf("Claim(alice) with task 1 busy waited to write %v; want no waiting write", w)
	}
	left := "2"
	if got.ID == "2" {
		left = "3"
	}
	b.setBusy("1", left)
	got, err = l.Claim(ctx, "bob")
	if err != nil || got.ID != "1" || got.Owner != "bob" {
		t.Errorf("Claim(bob) with every ready task busy = {ID %q, Owner %q}, %v; want \"1\" (the first busy one, left claimable), owned by bob", got.ID, got.Owner, err)
	}
	if w := b.waits(); !slices.Equal(w, []string{"1"}) {
		t.Errorf("Claim(bob) with every ready task busy waited to write %v; want [1]", w)
	}
	if stored := mustGetTask(t, l, left); stored.Owner != "" || stored.Status != tasklist.StatusPending {
		t.Errorf("task %s, busy and passed over = {Owner %q, Status %q}; want pending and unowned", left, stored.Owner, stored.Status)
	}
}

// rivalStore lets a rival claim task 1 right after the first List made
// through it, as a claimer racing on another process would.
type rivalStore struct {
	tasklist.Store
	once sync.Once
	err  error
}

func (r *rivalStore) List(ctx context.Context, list string) ([]tasklist.Entry, error) {
	entries, err := r.Store.List(ctx, list)
	r.once.Do(func() {
		task, rev, gerr := r.Store.Get(ctx, list, "1")
		if gerr != nil {
			r.err = gerr
			return
		}
		task.Owner, task.Status = "rival", tasklist.StatusInProgress
		_, r.err = r.Store.Put(ctx, list, task, rev)
	})
	return entries, err
}

// testClaimAfterLostRace checks that a claimer that loses the first ready
// task takes another in the same call, and leaves the rival's task alone.
func testClaimAfterLostRace(t *testing.T, s tasklist.Store) {
	ctx := t.Context()
	r := &rivalStore{Store: s}
	l := tasklist.New(r, listName)
	for i := range 3 {
		mk(t, tasklist.New(s, listName), tasklist.Draft{Subject: fmt.Sprint("task ", i+1)})
	}
	got, err := l.Claim(ctx, "alice")
	if r.err != nil {
		t.Fatalf("the rival's claim of task 1 failed: %v", r.err)
	}
	if err != nil || got.ID == "1" || got.Owner != "alice" {
		t.Errorf("Claim(alice) after losing task 1 = {ID %q, Owner %q}, %v; want task 2 or 3, owned by alice", got.ID, got.Owner, err)
	}
	if stored := mustGetTask(t, l, "1"); stored.Owner != "rival" {
		t.Errorf("task 1 after alice lost it = owner %q; want rival", stored.Owner)
	}
}
