package dirwatch

import (
	"errors"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// eventLoop turns fsnotify events and errors into kicks until the fsnotify
// watcher is closed.
func (w *Watcher) eventLoop() {
	for {
		select {
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			w.handleEvent(ev)
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.handleError(err)
		case <-w.stop:
			return
		}
	}
}

// handleEvent kicks the subscribers of the event's directory whose match
// accepts the entry's name. If the event says a watched directory itself
// was removed or renamed, its watch is gone: its subscribers are kicked and
// the directory is polled from then on.
func (w *Watcher) handleEvent(ev fsnotify.Event) {
	dir, name := filepath.Dir(ev.Name), filepath.Base(ev.Name)
	w.mu.Lock()
	var subs []*subscription
	if d := w.dirs[dir]; d != nil && !d.poll {
		subs = subsOf(d)
	}
	var gone *watchedDir
	if d := w.dirs[ev.Name]; d != nil && !d.poll && ev.Has(fsnotify.Remove|fsnotify.Rename) {
		gone = d
	}
	w.mu.Unlock()

	for _, s := range subs {
		if s.match(name) {
			s.fire()
		}
	}
	if gone != nil {
		w.switchToPoll(gone)
	}
}

// handleError reacts to an error from fsnotify. Events may have been lost
// (ErrEventOverflow, or a read error), so every subscriber is kicked to
// rescan.
func (w *Watcher) handleError(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		w.log.Warn("dirwatch: event queue overflowed; kicking every subscriber to rescan")
	} else {
		w.log.Warn("dirwatch: notification error; kicking every subscriber to rescan", "err", err)
	}
	w.mu.Lock()
	var subs []*subscription
	for _, d := range w.dirs {
		subs = append(subs, subsOf(d)...)
	}
	w.mu.Unlock()
	for _, s := range subs {
		s.fire()
	}
}

// switchToPoll moves d, whose directory was removed or renamed away, to
// polling and kicks its subscribers. If the directory is re-created, the
// poll notices the new entries.
func (w *Watcher) switchToPoll(d *watchedDir) {
	snap := snapshot(d.path)
	w.mu.Lock()
	if w.dirs[d.path] != d || d.poll {
		w.mu.Unlock()
		return
	}
	d.poll, d.snap = true, snap
	w.startPollLocked()
	subs := subsOf(d)
	w.mu.Unlock()
	w.log.Info("dirwatch: watched directory removed or renamed; polling it", "dir", d.path)
	for _, s := range subs {
		s.fire()
	}
}

// subsOf copies d's subscribers. Watcher.mu must be held.
func subsOf(d *watchedDir) []*subscription {
	subs := make([]*subscription, 0, len(d.subs))
	for s := range d.subs {
		subs = append(subs, s)
	}
	return subs
}
