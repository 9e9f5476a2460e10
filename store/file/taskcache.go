package file

import (
	"context"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/internal/atomicfile"
	"github.com/troupe-dev/troupe/tasklist"
)

// taskCache keeps the last decoding of each task file a listing read, so
// that a listing reads and decodes only the files that changed since: a
// claimer lists the whole list before each attempt, and in a drain of 50
// tasks by 16 processes, reading and decoding unchanged files was more
// than half of the CPU (BenchmarkDrainStores).
//
// A file is taken as unchanged by the rule of the team cache (racySlack,
// git's "racily clean"): its identity (device, inode, size, times) equals
// the one stat gave just before and just after the read that filled the
// entry, and the file had not changed for racySlack before that read
// began. Troupe replaces a task file by rename (a new inode); Claude Code
// rewrites it in place, which changes its times; a rewrite within one tick
// of the coarse file clock after the read began leaves the times as they
// were, but the entry of such a read is never trusted.
//
// The entries of one list are replaced by each listing, so files deleted
// since are dropped.
type taskCache struct {
	mu    sync.Mutex
	lists map[string]map[string]cachedTask // guarded by mu; by list folder, then file name
	// clock is the kernel's clock (time.Now, not the store's injected
	// one: see racySlack); tests move it on instead of waiting.
	clock func() time.Time
}

// now reads tc's clock.
func (tc *taskCache) now() time.Time {
	if tc.clock != nil {
		return tc.clock()
	}
	return time.Now()
}

// cachedTask is one task file as a listing read it. Its task is shared
// with the listings that returned it, which never modify it (Tasks.List
// hands out copies).
type cachedTask struct {
	id   atomicfile.Identity // equal before and after the read
	seen time.Time           // wall time just before the read began
	task tasklist.Task
	rev  tasklist.Revision
}

// trusted reports whether an equal identity means equal bytes.
func (c cachedTask) trusted() bool { return settledBefore(c.id, c.seen) }

// listing returns the cached entries of list folder dir (read only) and a
// map for the entries of the listing under way.
func (tc *taskCache) listing(dir string) (old, next map[string]cachedTask) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.lists[dir], make(map[string]cachedTask, len(tc.lists[dir]))
}

// done makes next the cached entries of dir.
func (tc *taskCache) done(dir string, next map[string]cachedTask) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.lists == nil {
		tc.lists = map[string]map[string]cachedTask{}
	}
	tc.lists[dir] = next
}

// forget drops the entries of dir (its list was deleted).
func (tc *taskCache) forget(dir string) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	delete(tc.lists, dir)
}

// readCached is readTask for a listing: the file at path, named name in
// its folder, comes from old when its entry is trusted and its identity
// unchanged; otherwise it is read, and kept in next when it stood still
// around the read.
func (ts *Tasks) readCached(ctx context.Context, list, id, name, path string, old, next map[string]cachedTask) (tasklist.Task, tasklist.Revision, error) {
	seen := ts.s.taskCache.now()
	before, err := atomicfile.Stat(path)
	if err == nil && before.Exists {
		if c, ok := old[name]; ok && c.id == before && c.trusted() {
			next[name] = c
			return c.task, c.rev, nil
		}
	}
	t, rev, err := ts.readTask(ctx, list, id, path)
	if err != nil || !before.Exists {
		return t, rev, err
	}
	if after, serr := atomicfile.Stat(path); serr == nil && after == before {
		next[name] = cachedTask{id: before, seen: seen, task: t, rev: rev}
	}
	return t, rev, nil
}
