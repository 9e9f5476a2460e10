package lockfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// lockSuffix ends the name of a lock directory that locks a file (docs/protocol.md
// section 5: <file>.lock).
const lockSuffix = ".lock"

// Acquire takes the lock directory dir (callers pass <file>.lock; its
// parent must exist), waiting until it is free or stale, or until ctx is
// done. The error then wraps context.Cause(ctx), names dir and how long
// Acquire waited, and also wraps ErrTimeout if ctx's deadline passed.
//
// While waiting, Acquire wakes on the first of: a change of dir reported by
// opts.Watcher (if set), the moment the holder's lock turns stale, and an
// exponential backoff from MinBackoff to MaxBackoff. With opts.Abandon set,
// the Watcher also wakes it when the locked file changes (see
// Options.Abandon).
//
// The returned Lock must be released with Release.
func Acquire(ctx context.Context, dir string, opts Options) (*Lock, error) {
	o := opts.normalized()
	start := time.Now()
	var (
		kicks   <-chan struct{}
		cancel  func()
		timer   *time.Timer
		backoff = o.MinBackoff
	)
	defer func() {
		if cancel != nil {
			cancel()
		}
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if ctx.Err() != nil {
			return nil, newWaitError(ctx, dir, time.Since(start))
		}
		l, holder, err := attempt(dir, o)
		if !errors.Is(err, ErrLocked) {
			return l, err
		}
		if o.Abandon != nil {
			if err := o.Abandon(); err != nil {
				return nil, err
			}
		}
		if o.Watcher != nil && cancel == nil {
			kicks, cancel, err = o.Watcher.Subscribe(filepath.Dir(dir), wakeNames(filepath.Base(dir), o.Abandon != nil))
			if err == nil {
				continue // attempt again: a release before Subscribe sent no kick
			}
			o.Logger.Debug("lockfile: cannot watch lock directory; polling", "dir", dir, "err", err)
			kicks, cancel = nil, func() {}
		}

		wait := backoff
		if holder != (ident{}) {
			// Wake exactly when the holder's lock turns stale.
			untilStale := holder.modTime().Add(o.Stale).Sub(o.Now()) + time.Millisecond
			wait = max(min(wait, untilStale), 0)
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-ctx.Done():
			return nil, newWaitError(ctx, dir, time.Since(start))
		case <-kicks:
		case <-timer.C:
			backoff = min(2*backoff, o.MaxBackoff)
		}
	}
}

// TryAcquire makes one attempt to take the lock directory dir, reclaiming
// it if stale. It returns an error wrapping ErrLocked at once if the lock
// is held.
func TryAcquire(dir string, opts Options) (*Lock, error) {
	o := opts.normalized()
	l, holder, err := attempt(dir, o)
	if errors.Is(err, ErrLocked) && holder != (ident{}) {
		return nil, fmt.Errorf("acquire %s (lock age %v): %w", dir, o.Now().Sub(holder.modTime()).Round(time.Millisecond), err)
	}
	if errors.Is(err, ErrLocked) {
		return nil, fmt.Errorf("acquire %s: %w", dir, err)
	}
	return l, err
}

// attempt tries to take the lock: mkdir, or reclaim a stale lock and mkdir
// again. When the lock is held it returns ErrLocked (unwrapped) and, if
// known, the holder's ident.
func attempt(dir string, o Options) (*Lock, ident, error) {
	for range 3 {
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			l, err := newLock(dir, o)
			return l, ident{}, err
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, ident{}, fmt.Errorf("lockfile: acquire %s: %w", dir, err)
		}
		holder, err := statIdent(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue // released since our mkdir
		}
		if err != nil {
			return nil, ident{}, fmt.Errorf("lockfile: acquire %s: %w", dir, err)
		}
		if o.Now().Sub(holder.modTime()) <= o.Stale {
			return nil, holder, ErrLocked
		}
		if err := reclaim(dir, holder, o.Logger); err != nil {
			return nil, ident{}, fmt.Errorf("lockfile: acquire %s: reclaim stale lock: %w", dir, err)
		}
	}
	return nil, ident{}, ErrLocked // lost every race; the caller waits
}

// wakeNames returns the names of the entries whose changes wake a waiter
// for the lock directory named lock: the lock itself and, for a waiter
// that may abandon, the file it locks (lock without its ".lock" suffix),
// since a change of that file is what usually ends such a wait.
func wakeNames(lock string, abandon bool) func(string) bool {
	file, ok := strings.CutSuffix(lock, lockSuffix)
	if !abandon || !ok || file == "" {
		return func(n string) bool { return n == lock }
	}
	return func(n string) bool { return n == lock || n == file }
}

// waitError is Acquire's error when ctx ends the wait. It wraps the
// context's cause and error, and ErrTimeout after a deadline.
type waitError struct {
	dir    string
	waited time.Duration
	cause  error // context.Cause
	ctxErr error // ctx.Err, which may differ from a custom cause
}

func newWaitError(ctx context.Context, dir string, waited time.Duration) error {
	return &waitError{dir: dir, waited: waited, cause: context.Cause(ctx), ctxErr: ctx.Err()}
}

func (e *waitError) timeout() bool { return errors.Is(e.ctxErr, context.DeadlineExceeded) }

func (e *waitError) Error() string {
	verb := "gave up"
	if e.timeout() {
		verb = "timed out"
	}
	return fmt.Sprintf("lockfile: acquire %s: %s after waiting %v: %v",
		e.dir, verb, e.waited.Round(time.Millisecond), e.cause)
}

func (e *waitError) Unwrap() []error {
	errs := []error{e.cause}
	if e.ctxErr != e.cause {
		errs = append(errs, e.ctxErr)
	}
	if e.timeout() {
		errs = append(errs, ErrTimeout)
	}
	return errs
}
