package dirwatch

import (
	"io/fs"
	"os"
	"time"
)

// entryKey is what polling compares to notice a change of one entry.
type entryKey struct {
	ino   uint64
	size  int64
	mtime int64
	ctime int64 // moves on an in-place rewrite that keeps size and mtime
	mode  fs.FileMode
}

// snapshot lists dir. An unreadable or missing directory is an empty
// listing, so that its re-creation shows up as changes.
func snapshot(dir string) map[string]entryKey {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return map[string]entryKey{}
	}
	snap := make(map[string]entryKey, len(entries))
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			continue // removed since ReadDir
		}
		snap[e.Name()] = entryKey{ino: inode(fi), size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: ctime(fi), mode: fi.Mode()}
	}
	return snap
}

// startPollLocked starts the poll loop unless it runs. Watcher.mu must be
// held.
func (w *Watcher) startPollLocked() {
	if !w.pollRunning && w.goFuncLocked(w.pollLoop) {
		w.pollRunning = true
	}
}

// pollLoop polls every polled directory each interval, and exits when
// there are none left (startPollLocked restarts it) or on Close.
func (w *Watcher) pollLoop() {
	t := time.NewTicker(w.pollInterval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		w.mu.Lock()
		var dirs []*watchedDir
		for _, d := range w.dirs {
			if d.poll {
				dirs = append(dirs, d)
			}
		}
		if len(dirs) == 0 {
			w.pollRunning = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		for _, d := range dirs {
			w.pollDir(d)
		}
	}
}

// pollDir lists d, and kicks each subscriber for which a matching entry was
// added, removed or changed since the last listing. All of a round's kicks
// for d are sent after all its subscribers were evaluated.
func (w *Watcher) pollDir(d *watchedDir) {
	snap := snapshot(d.path)
	w.mu.Lock()
	old := d.snap
	d.snap = snap
	subs := subsOf(d)
	w.mu.Unlock()

	var changed []string
	for name, k := range snap {
		if prev, had := old[name]; !had || prev != k {
			changed = append(changed, name)
		}
	}
	for name := range old {
		if _, ok := snap[name]; !ok {
			changed = append(changed, name)
		}
	}
	if len(changed) == 0 {
		return
	}
	var kicks []*subscription
	for _, s := range subs {
		for _, name := range changed {
			if s.match(name) {
				kicks = append(kicks, s)
				break
			}
		}
	}
	for _, s := range kicks {
		s.fire()
	}
}
