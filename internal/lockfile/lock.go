package lockfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"
)

// Lock is a held lock directory. A timer keeps the directory's mtime fresh
// until Release, which every Lock needs. The timer runs its refresh on a
// goroutine of its own only when one is due (every Options.Update), so a
// Lock held for milliseconds costs no goroutine, and Release has no
// goroutine to stop and wait for.
type Lock struct {
	dir  string
	o    Options
	lost chan struct{} // closed when the lock is found compromised

	// mu serializes ownership checks, refreshes and the release. Unlike
	// elsewhere it is held across the few metadata syscalls of one
	// check-then-touch (stat, utimes, stat), which must not interleave with
	// another; it is never held across channel operations or callbacks.
	mu         sync.Mutex
	id         ident       // the directory as we created or last touched it
	lostErr    error       // non-nil once compromised; lost is closed then
	released   bool        // Release ran; releaseErr is its result
	releaseErr error       // guarded by mu
	refresh    *time.Timer // the next refresh; stopped by Release
}

// newLock wraps the lock directory we just created and sets its refresh
// timer.
func newLock(dir string, o Options) (*Lock, error) {
	id, err := statIdent(dir)
	if err != nil {
		return nil, fmt.Errorf("lockfile: acquire %s: %w", dir, err)
	}
	l := &Lock{
		dir:  dir,
		o:    o,
		lost: make(chan struct{}),
		id:   id,
	}
	l.mu.Lock()
	l.refresh = time.AfterFunc(o.Update, l.refreshDue)
	l.mu.Unlock()
	return l, nil
}

// Dir returns the lock directory's path.
func (l *Lock) Dir() string { return l.dir }

// Lost returns a channel that is closed once the lock is found compromised
// (by a refresh, Verify or Release): its directory was removed or
// replaced, or it could not be refreshed within the stale time. A Release
// that removes our own directory does not close it.
func (l *Lock) Lost() <-chan struct{} { return l.lost }

// Verify returns nil only if the lock is certainly still ours: its
// directory exists with our inode and the mtime we last set, and its age
// is below Stale minus a one-second margin. If a refresh is due (the
// process may have been paused), Verify refreshes first. Otherwise it
// returns an error wrapping ErrCompromised and closes Lost. Call it just
// before committing a write (for example from atomicfile's BeforeCommit).
func (l *Lock) Verify() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return fmt.Errorf("%w: %s: already released", ErrCompromised, l.dir)
	}
	if l.lostErr != nil {
		return l.lostErr
	}
	if l.o.Now().Sub(l.id.modTime()) >= l.o.Update {
		// Due or overdue, say after a pause: refresh first, so a lock that
		// is still ours counts from now. A transient failure falls through
		// to the age check below.
		if l.refreshLocked() != nil && l.lostErr != nil {
			return l.lostErr
		}
	}
	cur, err := statIdent(l.dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return l.loseLocked("lock directory was removed")
	case err != nil:
		return l.loseLocked(fmt.Sprintf("cannot check lock directory: %v", err))
	case cur != l.id:
		return l.loseLocked(fmt.Sprintf("lock directory was replaced (found %v, want %v)", cur, l.id))
	}
	if age := l.o.Now().Sub(l.id.modTime()); age >= l.o.Stale-verifyMargin {
		return l.loseLocked(fmt.Sprintf("not refreshed for %v, too close to the stale time %v", age.Round(time.Millisecond), l.o.Stale))
	}
	return nil
}

// Release stops the refresh timer and removes the lock directory
// if it is still ours. If it is not (removed, or replaced by another
// holder's lock), Release leaves it alone and returns an error wrapping
// ErrCompromised; it does the same if the lock was found compromised
// earlier. Release is idempotent: later calls return the first result.
func (l *Lock) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.released {
		l.released = true
		l.refresh.Stop() // a refresh that fired meanwhile finds released set
		l.releaseErr = l.removeLocked()
	}
	return l.releaseErr
}

// removeLocked removes the lock directory if it is ours. l.mu must be held.
func (l *Lock) removeLocked() error {
	cur, err := statIdent(l.dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return l.loseLocked("lock directory was removed")
	case err != nil:
		return fmt.Errorf("lockfile: release %s: %w", l.dir, err)
	case cur != l.id:
		return l.loseLocked(fmt.Sprintf("lock directory belongs to another holder now (found %v, want %v); left in place", cur, l.id))
	}
	err = os.Remove(l.dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return l.loseLocked("lock directory was removed")
	case errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST):
		// A reclaimer claimed it (reclaim step 2) since our check.
		return l.loseLocked("lock directory was claimed by a reclaimer; left in place")
	case err != nil:
		return fmt.Errorf("lockfile: release %s: %w", l.dir, err)
	}
	return l.lostErr // nil unless Verify gave up on the lock earlier
}

// refreshDue runs when a refresh is due: it refreshes the lock and sets
// the timer for the next one, every Update until Release or until the lock
// is lost. After a transient failure it retries within a second.
func (l *Lock) refreshDue() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released || l.lostErr != nil {
		return
	}
	err := l.refreshLocked()
	if l.lostErr != nil {
		return
	}
	next := l.o.Update
	if err != nil {
		next = min(next, MinUpdate)
	}
	l.refresh.Reset(next)
}

// refreshLocked checks that the lock directory is still ours (our inode and
// the mtime we last set) and sets its mtime to now. It returns nil, the
// lost error, or a transient error (the lock is not lost yet). The check
// and the touch go through one open handle (os.Root), so a directory that
// replaced ours at the path meanwhile is never touched. l.mu must be held.
func (l *Lock) refreshLocked() error {
	if l.lostErr != nil {
		return l.lostErr
	}
	root, err := os.OpenRoot(l.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return l.loseLocked("lock directory was removed")
	}
	if err != nil {
		return l.transientLocked(err)
	}
	defer root.Close()
	fi, err := root.Stat(".")
	if err != nil {
		return l.transientLocked(err)
	}
	if cur := identOf(fi); cur != l.id {
		return l.loseLocked(fmt.Sprintf("lock directory was replaced or touched by another process (found %v, want %v)", cur, l.id))
	}
	now := l.o.Now()
	if err := root.Chtimes(".", now, now); err != nil {
		return l.transientLocked(err)
	}
	if fi, err = root.Stat("."); err != nil {
		return l.transientLocked(err)
	}
	l.id = identOf(fi)
	return nil
}

// transientLocked handles a refresh that failed without proving the lock
// lost: the lock is lost anyway once it is older than Stale, as others
// will judge it stale. l.mu must be held.
func (l *Lock) transientLocked(err error) error {
	if age := l.o.Now().Sub(l.id.modTime()); age > l.o.Stale {
		return l.loseLocked(fmt.Sprintf("not refreshed within the stale time: %v", err))
	}
	l.o.Logger.Warn("lockfile: refresh failed; retrying", "dir", l.dir, "err", err)
	return err
}

// loseLocked marks the lock compromised (once) and returns the error that
// says why. l.mu must be held.
func (l *Lock) loseLocked(reason string) error {
	if l.lostErr == nil {
		l.lostErr = fmt.Errorf("%w: %s: %s", ErrCompromised, l.dir, reason)
		close(l.lost)
		l.o.Logger.Warn("lockfile: lock compromised", "dir", l.dir, "reason", reason)
	}
	return l.lostErr
}
