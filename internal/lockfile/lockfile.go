// Package lockfile implements the lock-directory protocol that Claude Code
// (through proper-lockfile) uses for its agent-team files, so that troupe
// and Claude Code processes exclude each other (docs/protocol.md section 5).
//
// The lock for a file is a directory, normally <file>.lock. Acquiring is
// mkdir; the holder refreshes the directory's mtime every Options.Update;
// a lock whose mtime is older than Options.Stale is stale and may be
// reclaimed; releasing is rmdir. Every process sharing a lock must use the
// same Stale (Claude Code: 10 s), or live locks get stolen.
//
// The lock directory must be named exactly as the peers name it: Claude
// Code locks an inbox at <inbox>.json.lock, and a task file at
// <realpath(task file)>.lock, so resolve symlinks in such paths first.
//
// Beyond proper-lockfile:
//   - Reclaiming a stale lock is atomic between reclaimers: exactly one
//     reclaimer claims the stale version (a mkdir inside it), renames it to
//     a unique sibling name and removes it, and a live lock is never removed
//     instead (proper-lockfile#121). See reclaim for the steps.
//   - A holder that was paused past Stale (SIGSTOP, laptop sleep) learns it:
//     Lock.Verify, called just before committing a write, fails with
//     ErrCompromised if the lock is no longer certainly ours, and Lost is
//     closed. Committing only after Verify (and by atomic rename) keeps a
//     paused holder from overwriting newer data.
//   - Waiting is event-driven when Options.Watcher is set: a release wakes
//     waiters within milliseconds, and a waiter also wakes exactly when the
//     holder's lock would turn stale.
//
// While a stale lock is being reclaimed, a claim directory .reclaim-<n>
// exists inside it and the lock is briefly renamed to <dir>.stale-<random>
// next to it; both are gone once the reclaim completes.
//
// A Lock is safe for concurrent use. Each Lock owns a refresh timer, which
// runs a goroutine only while a refresh is under way; Release stops it, and
// a refresh under way finishes before Release removes the directory (they
// share the Lock's mutex). Locks are advisory and
// per directory path: two Lock values for one path in one process exclude
// each other like two processes do.
package lockfile

import (
	"errors"
	"log/slog"
	"time"

	"github.com/troupe-dev/troupe/internal/dirwatch"
)

// Errors callers branch on.
var (
	// ErrLocked means the lock is held by someone else and is not stale.
	ErrLocked = errors.New("lockfile: locked")
	// ErrCompromised means the lock can no longer be trusted to be ours: its
	// directory was removed or replaced, or it was not refreshed in time.
	// The holder must not commit.
	ErrCompromised = errors.New("lockfile: lock compromised")
	// ErrTimeout is wrapped by Acquire's error when its ctx deadline passed.
	ErrTimeout = errors.New("lockfile: timed out waiting for lock")
)

// Defaults, matching Claude Code's use of proper-lockfile.
const (
	DefaultStale      = 10 * time.Second
	DefaultUpdate     = DefaultStale / 2
	DefaultMinBackoff = 5 * time.Millisecond
	DefaultMaxBackoff = 100 * time.Millisecond

	// MinStale is the smallest Stale accepted; smaller values are raised
	// to it (as proper-lockfile does).
	MinStale = 2 * time.Second
	// MinUpdate is the smallest refresh period.
	MinUpdate = time.Second
)

// verifyMargin is how long before the stale time Verify stops trusting the
// lock: a commit must finish within it.
const verifyMargin = time.Second

// Options configures Acquire and TryAcquire. The zero value gives Claude
// Code's settings.
type Options struct {
	// Stale is the age of a lock's mtime after which it is stale. Zero means
	// DefaultStale; values below MinStale are raised to MinStale.
	Stale time.Duration
	// Update is how often a holder refreshes its lock's mtime. Zero means
	// Stale/2; it is clamped to [MinUpdate, Stale/2].
	Update time.Duration
	// MinBackoff and MaxBackoff bound the exponential backoff between
	// attempts while waiting (the fallback when no Watcher event comes).
	// Zero means DefaultMinBackoff / DefaultMaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// Now returns the current time; nil means time.Now. Lock ages compare it
	// with directory mtimes, as other processes do.
	Now func() time.Time
	// Watcher, if set, wakes waiters as soon as the lock directory changes.
	Watcher *dirwatch.Watcher
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Abandon, if set, is asked each time Acquire finds the lock held,
	// before it waits: a non-nil error ends the wait with that error (the
	// reason to take the lock is gone, such as a compare-and-swap that can
	// no longer succeed), so that losers of a race do not queue for it.
	// With a Watcher, such a waiter also wakes when the file that the lock
	// directory <file>.lock locks is created, replaced or removed: a loser
	// then leaves as soon as the holder has written the file, not when the
	// holder releases the lock after syncing it.
	Abandon func() error
}

// normalized returns o with defaults and clamps applied.
func (o Options) normalized() Options {
	if o.Stale == 0 {
		o.Stale = DefaultStale
	}
	o.Stale = max(o.Stale, MinStale)
	if o.Update == 0 {
		o.Update = o.Stale / 2
	}
	o.Update = min(max(o.Update, MinUpdate), o.Stale/2)
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
