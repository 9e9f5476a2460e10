package file

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/internal/atomicfile"
	"github.com/troupe-dev/troupe/internal/lockfile"
	"github.com/troupe-dev/troupe/tasklist"
)

var _ tasklist.Store = (*Tasks)(nil)

// Task list layout (docs/protocol.md sections 1, 5 and 8).
const (
	// MaxListNameLen bounds task list names, in bytes.
	MaxListNameLen = 128
	// listLockTarget is the empty file whose lock directory (".lock.lock")
	// is the list lock, as Claude Code names it. Create allocates ids under
	// it, excluding Claude Code's allocations.
	listLockTarget = ".lock"
	// structureLockTarget names the lock (".structure.lock") that Lock
	// takes. It cannot be the list lock: tasklist.List holds Lock while it
	// calls Create. Claude Code takes no list-wide lock for edges or
	// deletes, so this lock only needs to exclude troupe's users.
	structureLockTarget = ".structure"
	// highWaterName holds, in decimal, the highest task id a list ever used.
	highWaterName = ".highwatermark"
	taskExt       = ".json"
)

// Re-reads of a file that fails to decode. Claude Code rewrites task files
// (and team files) in place, so a lock-free reader can see a truncated file
// while a write is under way; it writes them under their locks, though.
// readSettled therefore re-reads once after settleMinPause and then under
// each of the file's locks in turn, after which any such write is over.
// Where no lock can be taken, a file modified within settleFresh is re-read
// with pauses doubling up to settleMaxPause, for at most settleBudget.
const (
	settleMinPause = 2 * time.Millisecond
	settleMaxPause = 20 * time.Millisecond
	settleBudget   = 100 * time.Millisecond
	settleFresh    = time.Second
)

// checkListName refuses list names that are empty, too long, or could name
// a path outside the tasks folder.
func checkListName(list string) error {
	var reason string
	switch {
	case list == "":
		reason = "empty"
	case len(list) > MaxListNameLen:
		reason = fmt.Sprintf("longer than %d bytes", MaxListNameLen)
	case strings.ContainsRune(list, 0):
		reason = "contains NUL"
	case strings.ContainsAny(list, `/\`):
		reason = "contains a path separator"
	case strings.Contains(list, ".."):
		reason = "contains '..'"
	default:
		return nil
	}
	return fmt.Errorf("task list name %q %s: %w", list, reason, tasklist.ErrInvalid)
}

// begin checks the store is open, the list name valid and the list's
// folder not a symbolic link.
func (ts *Tasks) begin(list string) error {
	if ts.s.isClosed() {
		return tasklist.ErrClosed
	}
	if err := checkListName(list); err != nil {
		return err
	}
	if err := ts.s.checkNoLinks(ts.s.listDir(list)); err != nil {
		return fmt.Errorf("task list %s: %w", list, err)
	}
	return nil
}

// checkTaskID refuses malformed ids before they reach a path. No task can
// have one, so the error matches tasklist.ErrNotFound as well as
// tasklist.ErrInvalid.
func checkTaskID(op, list, id string) error {
	if !tasklist.ValidID(id) {
		return fmt.Errorf("%s task %q in list %s: %w (%w): ids are positive decimal numbers", op, id, list, tasklist.ErrNotFound, tasklist.ErrInvalid)
	}
	return nil
}

func taskPath(dir, id string) string { return filepath.Join(dir, id+taskExt) }

// taskRevision is the revision of a stored task: a hash of the file's exact
// bytes, never zero, so compare-and-swap also works on files written by
// another program.
func taskRevision(data []byte) tasklist.Revision {
	h := fnv.New64a()
	h.Write(data)
	r := h.Sum64()
	if r == 0 {
		r = 1
	}
	return tasklist.Revision(r)
}

// encodeTask returns the task file for t: 2-space indented JSON, like
// Claude Code's.
func encodeTask(t tasklist.Task) ([]byte, error) {
	return json.MarshalIndent(t, "", "  ")
}

// readSettled reads path and decodes it with decode. A file that fails to
// decode is re-read: after a short pause, then while holding each lock
// target in locks (one at a time: callers must hold none of them), or, with
// no locks, for as long as it may still be half written (see settleFresh).
// decodeErr is the last failure once that is over. err reports a failed
// read (fs.ErrNotExist for a missing file) or ctx ending.
func readSettled(ctx context.Context, s *Store, path string, decode func([]byte) error, locks ...string) (data []byte, decodeErr, err error) {
	pause, waited := settleMinPause, time.Duration(0)
	for try := 1; ; try++ {
		data, err = readFile(path)
		if err != nil {
			return nil, nil, err
		}
		decodeErr = decode(data)
		if decodeErr == nil || waited+pause > settleBudget || try > 1 && (len(locks) > 0 || !recentlyModified(path, s.now())) {
			break
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, context.Cause(ctx)
		case <-t.C:
		}
		waited += pause
		pause = min(2*pause, settleMaxPause)
	}
	for _, target := range locks {
		if decodeErr == nil {
			break
		}
		lk, lerr := s.lock(ctx, target)
		if lerr != nil {
			return data, fmt.Errorf("%w (and could not re-read it under %s.lock: %v)", decodeErr, filepath.Base(target), lerr), nil
		}
		data, err = readFile(path)
		if rerr := lk.Release(); rerr != nil {
			s.log.Warn("release lock after a re-read", "path", path, "err", rerr)
		}
		if err != nil {
			return nil, nil, err
		}
		decodeErr = decode(data)
	}
	return data, decodeErr, nil
}

// recentlyModified reports whether path's content or inode changed within
// settleFresh before now.
func recentlyModified(path string, now time.Time) bool {
	id, err := atomicfile.Stat(path)
	if err != nil || !id.Exists {
		return false
	}
	changed := time.Unix(0, max(id.MtimeNs, id.CtimeNs))
	return now.Sub(changed) < settleFresh
}

// readTask reads task id of list from path, holding no locks. A file that
// stays undecodable, also under the task's lock and the list lock (which
// Claude Code holds while it rewrites or creates a task file in place),
// gives a *tasklist.CorruptError, a missing one tasklist.ErrNotFound.
func (ts *Tasks) readTask(ctx context.Context, list, id, path string) (tasklist.Task, tasklist.Revision, error) {
	var t tasklist.Task
	data, derr, err := readSettled(ctx, ts.s, path, func(b []byte) error {
		t = tasklist.Task{}
		return json.Unmarshal(b, &t)
	}, path, filepath.Join(filepath.Dir(path), listLockTarget))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tasklist.Task{}, 0, fmt.Errorf("task %s in list %s: %w", id, list, tasklist.ErrNotFound)
	case err != nil:
		return tasklist.Task{}, 0, fmt.Errorf("read task %s in list %s: %w", id, list, err)
	case derr != nil:
		return tasklist.Task{}, 0, &tasklist.CorruptError{List: list, Errors: map[string]error{id: fmt.Errorf("%s: %w", path, derr)}}
	}
	t.ID = id // the file name is authoritative, as for Claude Code
	compactValues(t.Metadata)
	compactValues(t.Extra)
	return t, taskRevision(data), nil
}

// compactValues compacts raw JSON values in place: the files are indented,
// and callers get values back as they stored them.
func compactValues(m map[string]json.RawMessage) {
	for k, v := range m {
		var b bytes.Buffer
		if json.Compact(&b, v) == nil {
			m[k] = b.Bytes()
		}
	}
}

// Get returns task id of list and its revision. It returns an error matching
// tasklist.ErrNotFound for a missing task and a *tasklist.CorruptError for a
// file that stays undecodable when re-read (see readTask).
func (ts *Tasks) Get(ctx context.Context, list, id string) (tasklist.Task, tasklist.Revision, error) {
	if err := ts.begin(list); err != nil {
		return tasklist.Task{}, 0, err
	}
	if err := checkTaskID("get", list, id); err != nil {
		return tasklist.Task{}, 0, err
	}
	return ts.readTask(ctx, list, id, taskPath(ts.s.listDir(list), id))
}

// List returns the tasks of list in numeric id order, with their revisions.
// Files other than <id>.json (locks, temp files, .highwatermark) are
// ignored. Tasks that stay undecodable are left out and reported in a
// *tasklist.CorruptError returned alongside the others.
//
// Concurrent calls in this process share reads (internal/flight): a
// thousand idle teammates woken by one task change read the list once or
// twice, not a thousand times, and each still sees every change made
// before its call.
func (ts *Tasks) List(ctx context.Context, list string) ([]tasklist.Entry, error) {
	if err := ts.begin(list); err != nil {
		return nil, err
	}
	shared, err := ts.s.lists.Do(ctx, list, func(ctx context.Context) ([]tasklist.Entry, error) {
		return ts.listOnce(ctx, list)
	})
	return cloneEntries(shared), err
}

// cloneEntries returns a copy of entries that shares nothing with it.
func cloneEntries(entries []tasklist.Entry) []tasklist.Entry {
	if entries == nil {
		return nil
	}
	out := make([]tasklist.Entry, len(entries))
	for i, e := range entries {
		out[i] = tasklist.Entry{Task: e.Task.Clone(), Rev: e.Rev}
	}
	return out
}

// listOnce reads every task of list.
func (ts *Tasks) listOnce(ctx context.Context, list string) ([]tasklist.Entry, error) {
	dir := ts.s.listDir(list)
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		ts.s.taskCache.forget(dir)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list tasks of %s: %w", list, err)
	}
	// Stale temp files of dead writers go here, where the folder has been
	// read anyway, rather than after a write, where a claim would wait for
	// the extra read of the folder.
	ts.s.sweepListed(dir, des)
	var (
		out     []tasklist.Entry
		corrupt *tasklist.CorruptError
	)
	old, next := ts.s.taskCache.listing(dir)
	defer ts.s.taskCache.done(dir, next)
	for _, de := range des {
		id, ok := taskFileID(de)
		if !ok {
			continue
		}
		t, rev, err := ts.readCached(ctx, list, id, de.Name(), filepath.Join(dir, de.Name()), old, next)
		var ce *tasklist.CorruptError
		switch {
		case err == nil:
			out = append(out, tasklist.Entry{Task: t, Rev: rev})
		case errors.Is(err, tasklist.ErrNotFound):
			// Deleted since the directory was read.
		case errors.As(err, &ce):
			if corrupt == nil {
				corrupt = &tasklist.CorruptError{List: list, Errors: map[string]error{}}
			}
			for k, v := range ce.Errors {
				corrupt.Errors[k] = v
			}
		default:
			return nil, fmt.Errorf("list tasks of %s: %w", list, err)
		}
	}
	slices.SortFunc(out, func(a, b tasklist.Entry) int {
		return cmpUint(tasklist.IDNum(a.Task.ID), tasklist.IDNum(b.Task.ID))
	})
	if corrupt != nil {
		return out, corrupt
	}
	return out, nil
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// taskFileID returns the id of a task file entry: a regular file named
// <id>.json with a canonical decimal id.
func taskFileID(de fs.DirEntry) (string, bool) {
	id, ok := strings.CutSuffix(de.Name(), taskExt)
	if !ok || !tasklist.ValidID(id) || !de.Type().IsRegular() {
		return "", false
	}
	return id, true
}

// Create stores t under the next id of list: one more than the highest of
// the task file names and .highwatermark, chosen under the list lock (the
// lock Claude Code takes to allocate ids). It ignores t.ID; an empty status
// becomes pending.
func (ts *Tasks) Create(ctx context.Context, list string, t tasklist.Task) (tasklist.Task, tasklist.Revision, error) {
	if err := ts.begin(list); err != nil {
		return tasklist.Task{}, 0, err
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
	dir := ts.s.listDir(list)
	lk, err := ts.lockList(ctx, dir)
	if err != nil {
		return tasklist.Task{}, 0, fmt.Errorf("create task in list %s: %w", list, err)
	}
	defer ts.release(lk)
	next, err := ts.nextID(ctx, dir)
	if err != nil {
		return tasklist.Task{}, 0, fmt.Errorf("create task in list %s: %w", list, err)
	}
	t.ID = strconv.FormatUint(next, 10)
	data, err := encodeTask(t)
	if err != nil {
		return tasklist.Task{}, 0, fmt.Errorf("create task in list %s: %w", list, err)
	}
	path := taskPath(dir, t.ID)
	err = atomicfile.WriteFile(path, data, 0o600, atomicfile.Options{BeforeCommit: func() error {
		if err := lk.Verify(); err != nil {
			return err
		}
		if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("task %s appeared while the list was locked (lstat: %v)", t.ID, err)
		}
		return nil
	}})
	if err := ts.s.written(err, "task", "list", list, "task", t.ID); err != nil {
		return tasklist.Task{}, 0, fmt.Errorf("create task %s in list %s: %w", t.ID, list, err)
	}
	ts.s.sweepTemps(dir)
	return t, taskRevision(data), nil
}

// nextID returns the id for a new task of the list in dir. The task files
// are listed before .highwatermark is read: Delete raises the watermark
// before it removes a file, so either the file or the raised watermark is
// seen.
func (ts *Tasks) nextID(ctx context.Context, dir string) (uint64, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var high uint64
	for _, de := range des {
		if id, ok := strings.CutSuffix(de.Name(), taskExt); ok && tasklist.ValidID(id) && !de.IsDir() {
			high = max(high, tasklist.IDNum(id))
		}
	}
	hw, err := ts.highWater(ctx, dir)
	if err != nil {
		return 0, err
	}
	return max(high, hw) + 1, nil
}

// highWater reads .highwatermark (0 when absent). An unreadable value is
// logged and counts as 0, as Claude Code reads it.
func (ts *Tasks) highWater(ctx context.Context, dir string) (uint64, error) {
	path := filepath.Join(dir, highWaterName)
	var n uint64
	_, derr, err := readSettled(ctx, ts.s, path, func(b []byte) error {
		var perr error
		n, perr = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 63)
		return perr
	})
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("read %s: %w", path, err)
	case derr != nil:
		ts.s.log.Warn("ignoring unreadable task high-water mark", "path", path, "err", derr)
		return 0, nil
	}
	return n, nil
}

// raiseHighWater makes .highwatermark at least n. It holds the lock of
// .highwatermark itself, so that concurrent deletes never lower it.
func (ts *Tasks) raiseHighWater(ctx context.Context, dir string, n uint64) error {
	path := filepath.Join(dir, highWaterName)
	lk, err := ts.s.lock(ctx, path)
	if err != nil {
		return fmt.Errorf("raise %s: %w", path, err)
	}
	defer ts.release(lk)
	cur, err := ts.highWater(ctx, dir)
	if err != nil || cur >= n {
		return err
	}
	return atomicfile.WriteFile(path, []byte(strconv.FormatUint(n, 10)), 0o600, atomicfile.Options{BeforeCommit: lk.Verify})
}

var _ tasklist.TryPutter = (*Tasks)(nil)

// Put replaces task t.ID of list if its stored revision is prev, under the
// task's lock, and returns the new revision. It returns an error matching
// tasklist.ErrConflict when the task changed since prev and
// tasklist.ErrNotFound when it no longer exists.
func (ts *Tasks) Put(ctx context.Context, list string, t tasklist.Task, prev tasklist.Revision) (tasklist.Revision, error) {
	return ts.put(ctx, list, t, prev, true)
}

// TryPut is Put, except that it does not wait for the task's lock: while
// another writer holds it (a troupe process, or Claude Code), it returns an
// error matching tasklist.ErrBusy at once. A stale lock is reclaimed, as
// Put does.
func (ts *Tasks) TryPut(ctx context.Context, list string, t tasklist.Task, prev tasklist.Revision) (tasklist.Revision, error) {
	return ts.put(ctx, list, t, prev, false)
}

// put is Put, waiting for the task's lock if wait is set and failing with
// tasklist.ErrBusy otherwise.
func (ts *Tasks) put(ctx context.Context, list string, t tasklist.Task, prev tasklist.Revision, wait bool) (tasklist.Revision, error) {
	if err := ts.begin(list); err != nil {
		return 0, err
	}
	if err := checkTaskID("put", list, t.ID); err != nil {
		return 0, err
	}
	if !t.Status.Valid() {
		return 0, fmt.Errorf("put task %s in list %s: %w: status %q", t.ID, list, tasklist.ErrInvalid, t.Status)
	}
	if err := tasklist.CheckText(t, false); err != nil {
		return 0, fmt.Errorf("put task %s in list %s: %w", t.ID, list, err)
	}
	data, err := encodeTask(t)
	if err != nil {
		return 0, fmt.Errorf("put task %s in list %s: %w", t.ID, list, err)
	}
	path := taskPath(ts.s.listDir(list), t.ID)
	lk, err := ts.lockTask(ctx, list, t.ID, path, prev, wait)
	if err != nil {
		return 0, err
	}
	var casErr error // a revision check that failed just before the commit
	released := false
	err = atomicfile.WriteFile(path, data, 0o600, atomicfile.Options{
		BeforeCommit: func() error {
			if err := lk.Verify(); err != nil {
				return err
			}
			casErr = checkRevision(list, t.ID, path, prev)
			return casErr
		},
		// The lock covers the replace. The folder's sync, which this call
		// still waits for before it returns, is not done under it: with
		// many claimers in one list, a sync waits for the file system's
		// journal, and every writer queued on this task would too.
		AfterCommit: func() { ts.release(lk); released = true },
	})
	if !released {
		ts.release(lk)
	}
	if casErr != nil {
		return 0, casErr
	}
	if err := ts.s.written(err, "task", "list", list, "task", t.ID); err != nil {
		return 0, fmt.Errorf("put task %s in list %s: %w", t.ID, list, err)
	}
	return taskRevision(data), nil
}

// Delete removes task id of list if its stored revision is prev, under the
// task's lock, after raising .highwatermark so that the id is never reused.
func (ts *Tasks) Delete(ctx context.Context, list, id string, prev tasklist.Revision) error {
	if err := ts.begin(list); err != nil {
		return err
	}
	if err := checkTaskID("delete", list, id); err != nil {
		return err
	}
	dir := ts.s.listDir(list)
	path := taskPath(dir, id)
	lk, err := ts.lockTask(ctx, list, id, path, prev, true)
	if err != nil {
		return err
	}
	defer ts.release(lk)
	if err := ts.raiseHighWater(ctx, dir, tasklist.IDNum(id)); err != nil {
		return fmt.Errorf("delete task %s in list %s: %w", id, list, err)
	}
	if err := lk.Verify(); err != nil {
		return fmt.Errorf("delete task %s in list %s: %w", id, list, err)
	}
	if err := checkRevision(list, id, path, prev); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete task %s in list %s: %w", id, list, err)
	}
	return nil
}

// lockTask takes the lock of one task file (<id>.json.lock) and checks that
// the task is at revision prev. A task that is already past prev fails
// without taking the lock, so that the losers of a race do not queue for it.
// Without wait, a lock held by another writer fails at once with an error
// matching tasklist.ErrBusy (or tasklist.ErrConflict if the task has changed
// meanwhile).
func (ts *Tasks) lockTask(ctx context.Context, list, id, path string, prev tasklist.Revision, wait bool) (*lockfile.Lock, error) {
	stale := func() error { return checkRevision(list, id, path, prev) }
	if err := stale(); err != nil {
		return nil, err
	}
	var (
		lk  *lockfile.Lock
		err error
	)
	if wait {
		// While another writer holds the task, its revision is looked at
		// again before each wait: once the holder has changed it, this
		// writer has lost and leaves without taking the lock.
		lk, err = ts.s.lockUnless(ctx, path, stale)
	} else {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("lock task %s in list %s: %w", id, list, context.Cause(ctx))
		}
		lk, err = lockfile.TryAcquire(path+".lock", ts.s.lockOptions())
		if errors.Is(err, lockfile.ErrLocked) {
			if err := stale(); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("task %s in list %s is being written by another user: %w", id, list, tasklist.ErrBusy)
		}
	}
	if errors.Is(err, tasklist.ErrConflict) || errors.Is(err, tasklist.ErrNotFound) {
		return nil, err
	}
	if err != nil {
		if _, serr := os.Lstat(path); errors.Is(serr, fs.ErrNotExist) {
			return nil, fmt.Errorf("task %s in list %s: %w", id, list, tasklist.ErrNotFound)
		}
		return nil, fmt.Errorf("lock task %s in list %s: %w", id, list, err)
	}
	if err := stale(); err != nil { // changed between the last look and the lock
		ts.release(lk)
		return nil, err
	}
	return lk, nil
}

// checkRevision compares the task file's revision with prev.
func checkRevision(list, id, path string, prev tasklist.Revision) error {
	data, err := readFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("task %s in list %s: %w", id, list, tasklist.ErrNotFound)
	case err != nil:
		return fmt.Errorf("read task %s in list %s: %w", id, list, err)
	case taskRevision(data) != prev:
		return fmt.Errorf("task %s in list %s changed since it was read: %w", id, list, tasklist.ErrConflict)
	}
	return nil
}

// Lock serializes structural changes to list (tasks/<list>/.structure.lock)
// and returns the function that releases it. It is distinct from the list
// lock that Create takes, so Create may run while Lock is held.
func (ts *Tasks) Lock(ctx context.Context, list string) (unlock func(), err error) {
	if err := ts.begin(list); err != nil {
		return nil, err
	}
	dir := ts.s.listDir(list)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("lock task list %s: %w", list, err)
	}
	lk, err := ts.s.lock(ctx, filepath.Join(dir, structureLockTarget))
	if err != nil {
		return nil, fmt.Errorf("lock task list %s: %w", list, err)
	}
	var once sync.Once
	return func() { once.Do(func() { ts.release(lk) }) }, nil
}

// lockList creates the list folder and its empty .lock file if needed, and
// takes the list lock.
func (ts *Tasks) lockList(ctx context.Context, dir string) (*lockfile.Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	target := filepath.Join(dir, listLockTarget)
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return ts.s.lock(ctx, target)
}

// release releases lk, logging a failure: the write it guarded is already
// done or abandoned.
func (ts *Tasks) release(lk *lockfile.Lock) {
	if err := lk.Release(); err != nil {
		ts.s.log.Warn("release task lock", "err", err)
	}
}

// Watch returns a channel that receives a coalesced kick soon after a task
// of list is created, rewritten or removed, by this process or another
// (fsnotify on the list's folder, polling where notifications are not
// available). A kick may be spurious; the reader re-reads. The channel is
// closed when ctx is done or the store is closed.
func (ts *Tasks) Watch(ctx context.Context, list string) (<-chan struct{}, error) {
	if err := checkListName(list); err != nil {
		return nil, err
	}
	if err := ts.s.checkNoLinks(ts.s.listDir(list)); err != nil {
		return nil, fmt.Errorf("watch task list %s: %w", list, err)
	}
	ch, err := ts.s.watchDir(ctx, ts.s.listDir(list), func(n string) bool { return strings.HasSuffix(n, ".json") })
	if err != nil {
		return nil, fmt.Errorf("watch task list %s: %w", list, err)
	}
	return ch, nil
}
