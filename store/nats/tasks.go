package nats

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/troupe-dev/troupe/tasklist"
)

// ownCreateWait bounds how long Create waits for the stream's leader to
// show a task whose create was refused as taken (ownCreate).
const ownCreateWait = 2 * time.Second

// ownCreate returns key's entry when it is this call's own create: key's
// create was refused because the key exists, and allocated is the
// revision of the counter write that gave this call the key's id
// (allocate). Only this call creates a task under that id, and a task is
// claimed or edited only once it exists, so a key written after the
// allocation holds this call's create: an attempt that landed while its
// answer was lost (a leader change), maybe claimed since. A rolling
// restart saw that: the key no longer held the created bytes, a claimer
// had taken the task, and the task was stored again under the next id. A
// key written before the allocation is a task left from before (a list
// written without its counter): not own.
//
// The stream's leader answers: a replica, or a leader just elected and
// still applying, may not show the create yet (CI saw a replica read take
// the task for someone else's). So a key that cannot be seen is asked for
// again, after 1, 2, 4 ... ms, for up to ownCreateWait.
func (ts *Tasks) ownCreate(ctx context.Context, key string, allocated uint64) (e jetstream.KeyValueEntry, own bool, err error) {
	var waited time.Duration
	for wait := time.Millisecond; ; wait *= 2 {
		e, err := ts.s.leaderGet(ctx, ts.s.tasks, key)
		switch {
		case err == nil:
			return e, e.Revision() > allocated, nil
		case !errors.Is(err, jetstream.ErrKeyNotFound):
			return nil, false, err
		case waited >= ownCreateWait:
			return nil, false, fmt.Errorf("task %s: its create was refused as taken, yet the stream's leader shows no such task after %v", key, waited)
		}
		if sleepCtx(ctx, wait); ctx.Err() != nil {
			return nil, false, context.Cause(ctx)
		}
		waited += wait
	}
}

// allocate takes the next id of list: it advances the list's counter
// from the value the stream's leader has, by compare-and-swap, and
// returns the id and the revision of the write. An attempt whose answer
// was lost is not taken as landed when the counter then holds its value:
// another creator may have written that same value, and both would take
// the id. The next attempt advances the counter again instead, leaving an
// id unused if the lost write had landed. A lost race is an error
// matching isConflict.
func (ts *Tasks) allocate(ctx context.Context, list string) (id, allocated uint64, err error) {
	s := ts.s
	counter := s.tasks
	if r, ok := counter.(retryKV); ok {
		counter = r.KeyValue // one write per attempt: no landed check
	}
	err = s.retry(ctx, "allocate a task id in "+list, attemptTimeout, func(ctx context.Context, _ int) error {
		high, rev, err := ts.high(ctx, list)
		if err != nil {
			return err
		}
		next := []byte(strconv.FormatUint(high+1, 10))
		if rev == 0 {
			allocated, err = counter.Create(ctx, highKey(list), next)
		} else {
			allocated, err = counter.Update(ctx, highKey(list), next, rev)
		}
		id = high + 1
		return err
	})
	return id, allocated, err
}

// Create stores t under the next id of list, allocated by advancing the
// list's counter with compare-and-swap: one more than the highest id ever
// allocated, so ids are never reused. An empty status becomes pending.
func (ts *Tasks) Create(ctx context.Context, list string, t tasklist.Task) (tasklist.Task, tasklist.Revision, error) {
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
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return tasklist.Task{}, 0, fmt.Errorf("create task in list %s: %w", list, s.closedAs(err, tasklist.ErrClosed))
	}
	defer cancel()
	fail := func(err error) (tasklist.Task, tasklist.Revision, error) {
		return tasklist.Task{}, 0, fmt.Errorf("create task in list %s: %w", list, s.closedAs(err, tasklist.ErrClosed))
	}
	for range maxCAS {
		id, allocated, err := ts.allocate(ctx, list)
		if isConflict(err) {
			continue
		}
		if err != nil {
			return fail(err)
		}
		next := strconv.FormatUint(id, 10)
		t = t.Clone()
		t.ID = next
		data, err := json.Marshal(t)
		if err != nil {
			return fail(err)
		}
		trev, err := s.tasks.Create(ctx, taskKey(list, next), data)
		if isConflict(err) {
			e, own, err := ts.ownCreate(ctx, taskKey(list, next), allocated)
			if err != nil {
				return fail(err)
			}
			if !own {
				continue // a task left from before: take the next id
			}
			// Taking the next id would store the task twice. It is
			// returned as it is now: a claimer may have taken it.
			stored, err := decodeTask(next, e.Value())
			if err != nil {
				return fail(err)
			}
			return stored, tasklist.Revision(e.Revision()), nil
		}
		if err != nil {
			return fail(err)
		}
		return t.Clone(), tasklist.Revision(trev), nil
	}
	return fail(errors.New("too much contention"))
}

// high returns the highest id allocated in list and the counter's
// revision (0 when the list never had a task), as the stream's leader has
// them: a replica's older counter only makes the allocation's
// compare-and-swap fail and start over.
func (ts *Tasks) high(ctx context.Context, list string) (uint64, uint64, error) {
	e, err := ts.s.leaderGet(ctx, ts.s.tasks, highKey(list))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	n, err := strconv.ParseUint(string(e.Value()), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("bucket %s key %s: id counter %q: %w", ts.s.tasks.Bucket(), e.Key(), e.Value(), tasklist.ErrCorrupt)
	}
	return n, e.Revision(), nil
}

// Get returns a task and its revision, or tasklist.ErrNotFound.
func (ts *Tasks) Get(ctx context.Context, list, id string) (tasklist.Task, tasklist.Revision, error) {
	s := ts.s
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return tasklist.Task{}, 0, fmt.Errorf("get task %s in list %s: %w", id, list, s.closedAs(err, tasklist.ErrClosed))
	}
	defer cancel()
	return ts.get(ctx, list, id)
}

func (ts *Tasks) get(ctx context.Context, list, id string) (tasklist.Task, tasklist.Revision, error) {
	s := ts.s
	if !tasklist.ValidID(id) {
		return tasklist.Task{}, 0, fmt.Errorf("get task %q in list %s: %w", id, list, tasklist.ErrNotFound)
	}
	e, err := s.tasks.Get(ctx, taskKey(list, id))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return tasklist.Task{}, 0, fmt.Errorf("get task %s in list %s: %w", id, list, tasklist.ErrNotFound)
	}
	if err != nil {
		return tasklist.Task{}, 0, fmt.Errorf("get task %s in list %s: %w", id, list, s.closedAs(err, tasklist.ErrClosed))
	}
	t, err := decodeTask(id, e.Value())
	if err != nil {
		return tasklist.Task{}, 0, fmt.Errorf("get task %s in list %s: %w", id, list, &tasklist.CorruptError{List: list, Errors: map[string]error{id: err}})
	}
	return t, tasklist.Revision(e.Revision()), nil
}

// decodeTask decodes a stored task, which must carry the id of its key.
func decodeTask(id string, data []byte) (tasklist.Task, error) {
	var t tasklist.Task
	if err := json.Unmarshal(data, &t); err != nil {
		return tasklist.Task{}, err
	}
	if t.ID != id {
		return tasklist.Task{}, fmt.Errorf("task stored under id %s says id %q", id, t.ID)
	}
	return t, nil
}

// List returns every task of list in numeric id order; an absent list is
// empty. Undecodable tasks are left out and reported in a
// *tasklist.CorruptError returned with the others.
//
// Concurrent calls in this process share reads (internal/flight): a
// thousand idle teammates woken by one task change read the list once or
// twice, not a thousand times, and each still sees every change made
// before its call.
func (ts *Tasks) List(ctx context.Context, list string) ([]tasklist.Entry, error) {
	s := ts.s
	if s.isClosed() {
		return nil, fmt.Errorf("list tasks of %s: %w", list, tasklist.ErrClosed)
	}
	shared, err := s.lists.Do(ctx, list, func(ctx context.Context) ([]tasklist.Entry, error) {
		return ts.listOnce(ctx, list)
	})
	if shared == nil {
		return nil, err
	}
	out := make([]tasklist.Entry, len(shared))
	for i, e := range shared {
		out[i] = tasklist.Entry{Task: e.Task.Clone(), Rev: e.Rev}
	}
	return out, err
}

// listOnce reads every task of list.
func (ts *Tasks) listOnce(ctx context.Context, list string) ([]tasklist.Entry, error) {
	s := ts.s
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tasks of %s: %w", list, s.closedAs(err, tasklist.ErrClosed))
	}
	defer cancel()
	entries, err := s.scanKV(ctx, s.tasks, token(list)+".t.*")
	if err != nil {
		return nil, fmt.Errorf("list tasks of %s: %w", list, s.closedAs(err, tasklist.ErrClosed))
	}
	out := make([]tasklist.Entry, 0, len(entries))
	bad := map[string]error{}
	for _, e := range entries {
		id := e.Key()[strings.LastIndexByte(e.Key(), '.')+1:]
		t, err := decodeTask(id, e.Value())
		if err != nil {
			bad[id] = err
			continue
		}
		out = append(out, tasklist.Entry{Task: t, Rev: tasklist.Revision(e.Revision())})
	}
	slices.SortFunc(out, func(a, b tasklist.Entry) int {
		return cmp.Or(cmp.Compare(tasklist.IDNum(a.Task.ID), tasklist.IDNum(b.Task.ID)), strings.Compare(a.Task.ID, b.Task.ID))
	})
	if len(bad) > 0 {
		return out, fmt.Errorf("list tasks of %s: %w", list, &tasklist.CorruptError{List: list, Errors: bad})
	}
	return out, nil
}

// Put replaces task t.ID if its revision is still prev. It returns
// tasklist.ErrConflict if the task changed since and tasklist.ErrNotFound
// if it does not exist; it never creates a task.
func (ts *Tasks) Put(ctx context.Context, list string, t tasklist.Task, prev tasklist.Revision) (tasklist.Revision, error) {
	if !t.Status.Valid() {
		return 0, fmt.Errorf("put task %s in list %s: %w: status %q", t.ID, list, tasklist.ErrInvalid, t.Status)
	}
	if err := tasklist.CheckText(t, false); err != nil {
		return 0, fmt.Errorf("put task %s in list %s: %w", t.ID, list, err)
	}
	s := ts.s
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("put task %s in list %s: %w", t.ID, list, s.closedAs(err, tasklist.ErrClosed))
	}
	defer cancel()
	if !tasklist.ValidID(t.ID) {
		return 0, fmt.Errorf("put task %q in list %s: %w", t.ID, list, tasklist.ErrNotFound)
	}
	if prev == 0 {
		return 0, ts.casFailed(ctx, "put", list, t.ID, prev)
	}
	data, err := json.Marshal(t)
	if err != nil {
		return 0, fmt.Errorf("put task %s in list %s: %w", t.ID, list, err)
	}
	rev, err := s.tasks.Update(ctx, taskKey(list, t.ID), data, uint64(prev))
	if isConflict(err) {
		return 0, ts.casFailed(ctx, "put", list, t.ID, prev)
	}
	if err != nil {
		return 0, fmt.Errorf("put task %s in list %s: %w", t.ID, list, s.closedAs(err, tasklist.ErrClosed))
	}
	return tasklist.Revision(rev), nil
}

// Delete removes task id if its revision is still prev (ErrConflict
// otherwise, ErrNotFound if absent). Its id stays allocated.
func (ts *Tasks) Delete(ctx context.Context, list, id string, prev tasklist.Revision) error {
	s := ts.s
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("delete task %s in list %s: %w", id, list, s.closedAs(err, tasklist.ErrClosed))
	}
	defer cancel()
	if !tasklist.ValidID(id) {
		return fmt.Errorf("delete task %q in list %s: %w", id, list, tasklist.ErrNotFound)
	}
	if prev == 0 {
		return ts.casFailed(ctx, "delete", list, id, prev)
	}
	err = s.tasks.Delete(ctx, taskKey(list, id), jetstream.LastRevision(uint64(prev)))
	if isConflict(err) {
		return ts.casFailed(ctx, "delete", list, id, prev)
	}
	if err != nil {
		return fmt.Errorf("delete task %s in list %s: %w", id, list, s.closedAs(err, tasklist.ErrClosed))
	}
	return nil
}

// casFailed explains a refused compare-and-swap: the task is gone
// (ErrNotFound) or at another revision (ErrConflict).
func (ts *Tasks) casFailed(ctx context.Context, op, list, id string, prev tasklist.Revision) error {
	_, rev, err := ts.get(ctx, list, id)
	if errors.Is(err, tasklist.ErrNotFound) {
		return fmt.Errorf("%s task %s in list %s: %w", op, id, list, tasklist.ErrNotFound)
	}
	if err != nil && !errors.Is(err, tasklist.ErrCorrupt) {
		return fmt.Errorf("%s task %s in list %s: %w", op, id, list, err)
	}
	return fmt.Errorf("%s task %s in list %s: %w (at revision %d, not %d)", op, id, list, tasklist.ErrConflict, rev, prev)
}
