package mem

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/tasklist"
)

// Tasks is the tasklist.Store view of a Store.
type Tasks struct{ s *Store }

// taskList is one list's state; guarded by Store.mu.
type taskList struct {
	tasks map[string]tasklist.Entry
	high  uint64 // highest id ever allocated
}

// Create stores t under the next id: one more than the larger of the
// highest id present and the highest id ever allocated, so ids of deleted
// tasks are never reused. An empty status becomes pending.
func (ts *Tasks) Create(ctx context.Context, list string, t tasklist.Task) (tasklist.Task, tasklist.Revision, error) {
	if err := ctx.Err(); err != nil {
		return tasklist.Task{}, 0, fmt.Errorf("create task in list %s: %w", list, context.Cause(ctx))
	}
	if t.Status == "" {
		t.Status = tasklist.StatusPending
	}
	if !t.Status.Valid() {
		return tasklist.Task{}, 0, fmt.Errorf("create task in list %s: %w: status %q", list, tasklist.ErrInvalid, t.Status)
	}
	if err := tasklist.CheckText(t, false); err != nil {
		return tasklist.Task{}, 0, fmt.Errorf("create task in list %s: %w", list, err)
	}
	s := ts.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return tasklist.Task{}, 0, fmt.Errorf("create task in list %s: %w", list, tasklist.ErrClosed)
	}
	l := s.lists[list]
	if l == nil {
		l = &taskList{tasks: map[string]tasklist.Entry{}}
		s.lists[list] = l
	}
	next := l.high
	for id := range l.tasks {
		next = max(next, tasklist.IDNum(id))
	}
	next++
	l.high = next
	t = t.Clone()
	t.ID = fmt.Sprint(next)
	s.rev++
	l.tasks[t.ID] = tasklist.Entry{Task: t, Rev: s.rev}
	s.kickListLocked(list)
	return t.Clone(), s.rev, nil
}

// Get returns a task and its revision, or tasklist.ErrNotFound.
func (ts *Tasks) Get(ctx context.Context, list, id string) (tasklist.Task, tasklist.Revision, error) {
	if err := ctx.Err(); err != nil {
		return tasklist.Task{}, 0, fmt.Errorf("get task %s in list %s: %w", id, list, context.Cause(ctx))
	}
	s := ts.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return tasklist.Task{}, 0, fmt.Errorf("get task %s in list %s: %w", id, list, tasklist.ErrClosed)
	}
	e, ok := s.entryLocked(list, id)
	if !ok {
		return tasklist.Task{}, 0, fmt.Errorf("get task %s in list %s: %w", id, list, tasklist.ErrNotFound)
	}
	return e.Task.Clone(), e.Rev, nil
}

// List returns every task of list in numeric id order; an absent list is
// empty.
func (ts *Tasks) List(ctx context.Context, list string) ([]tasklist.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list tasks of %s: %w", list, context.Cause(ctx))
	}
	s := ts.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("list tasks of %s: %w", list, tasklist.ErrClosed)
	}
	l := s.lists[list]
	if l == nil {
		return nil, nil
	}
	ids := slices.SortedFunc(maps.Keys(l.tasks), func(a, b string) int {
		return cmp.Or(cmp.Compare(tasklist.IDNum(a), tasklist.IDNum(b)), strings.Compare(a, b))
	})
	out := make([]tasklist.Entry, 0, len(ids))
	for _, id := range ids {
		e := l.tasks[id]
		out = append(out, tasklist.Entry{Task: e.Task.Clone(), Rev: e.Rev})
	}
	return out, nil
}

// Put replaces task t.ID if its revision is still prev. It returns
// tasklist.ErrConflict if the task changed since and tasklist.ErrNotFound
// if it does not exist.
func (ts *Tasks) Put(ctx context.Context, list string, t tasklist.Task, prev tasklist.Revision) (tasklist.Revision, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("put task %s in list %s: %w", t.ID, list, context.Cause(ctx))
	}
	if !t.Status.Valid() {
		return 0, fmt.Errorf("put task %s in list %s: %w: status %q", t.ID, list, tasklist.ErrInvalid, t.Status)
	}
	if err := tasklist.CheckText(t, false); err != nil {
		return 0, fmt.Errorf("put task %s in list %s: %w", t.ID, list, err)
	}
	s := ts.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, fmt.Errorf("put task %s in list %s: %w", t.ID, list, tasklist.ErrClosed)
	}
	e, ok := s.entryLocked(list, t.ID)
	if !ok {
		return 0, fmt.Errorf("put task %s in list %s: %w", t.ID, list, tasklist.ErrNotFound)
	}
	if e.Rev != prev {
		return 0, fmt.Errorf("put task %s in list %s: %w (at revision %d, not %d)", t.ID, list, tasklist.ErrConflict, e.Rev, prev)
	}
	s.rev++
	s.lists[list].tasks[t.ID] = tasklist.Entry{Task: t.Clone(), Rev: s.rev}
	s.kickListLocked(list)
	return s.rev, nil
}

// Delete removes task id if its revision is still prev, raising the list's
// high-water mark so the id is never reused.
func (ts *Tasks) Delete(ctx context.Context, list, id string, prev tasklist.Revision) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete task %s in list %s: %w", id, list, context.Cause(ctx))
	}
	s := ts.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("delete task %s in list %s: %w", id, list, tasklist.ErrClosed)
	}
	e, ok := s.entryLocked(list, id)
	if !ok {
		return fmt.Errorf("delete task %s in list %s: %w", id, list, tasklist.ErrNotFound)
	}
	if e.Rev != prev {
		return fmt.Errorf("delete task %s in list %s: %w (at revision %d, not %d)", id, list, tasklist.ErrConflict, e.Rev, prev)
	}
	l := s.lists[list]
	l.high = max(l.high, tasklist.IDNum(id))
	delete(l.tasks, id)
	s.kickListLocked(list)
	return nil
}

// Lock takes the list's lock, waiting until it is free or ctx is done (the
// error is then ctx's cause) or the store is closed (tasklist.ErrClosed).
func (ts *Tasks) Lock(ctx context.Context, list string) (unlock func(), err error) {
	s := ts.s
	if s.isClosed() {
		return nil, fmt.Errorf("lock list %s: %w", list, tasklist.ErrClosed)
	}
	unlock, err = s.listLocks.lock(ctx, s.done, list)
	if errors.Is(err, errStoreClosed) {
		return nil, fmt.Errorf("lock list %s: %w", list, tasklist.ErrClosed)
	}
	if err != nil {
		return nil, fmt.Errorf("lock list %s: %w", list, err)
	}
	return unlock, nil
}

// entryLocked returns the stored entry of id. s.mu must be held.
func (s *Store) entryLocked(list, id string) (tasklist.Entry, bool) {
	l := s.lists[list]
	if l == nil {
		return tasklist.Entry{}, false
	}
	e, ok := l.tasks[id]
	return e, ok
}

// Watch returns a channel that receives a coalesced kick after every change
// of list (a task created, updated or deleted). It is closed when ctx is
// done or the store is closed.
func (ts *Tasks) Watch(ctx context.Context, list string) (<-chan struct{}, error) {
	ch, err := ts.s.watch(ctx, listKey(list))
	if err != nil {
		return nil, fmt.Errorf("watch task list %s: %w", list, err)
	}
	return ch, nil
}

// listKey is the watcher key of a task list; no agent is named with a NUL.
func listKey(list string) inboxKey { return inboxKey{list, "\x00tasks"} }

// kickListLocked kicks the watchers of list. s.mu must be held; kicks never
// block.
func (s *Store) kickListLocked(list string) {
	for w := range s.watchers[listKey(list)] {
		w.Kick()
	}
}
