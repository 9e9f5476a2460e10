// Package file stores teams, mailboxes and task lists as files, on-disk
// compatible with Claude Code's agent teams (docs/protocol.md): the same folders,
// file names, JSON fields and lock-directory protocol, so that a Claude Code
// session and a troupe session pointed at the same root share a team and
// exclude each other.
//
// Layout below the root:
//
//	teams/<team>/config.json             team file
//	teams/<team>/inboxes/<agent>.json    one JSON array per recipient
//	tasks/<list>/<id>.json               one file per task
//	tasks/<list>/.lock                   list-level lock target
//	tasks/<list>/.highwatermark          highest id ever used
//
// Every write is atomic (temp file, fsync, rename) and made under the
// file's lock, after re-verifying that the lock is still held and the file
// was not replaced since it was read; a holder that was paused past the
// stale time therefore never overwrites newer data.
//
// A Store is safe for concurrent use by goroutines and processes.
package file

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/internal/atomicfile"
	"github.com/troupe-dev/troupe/internal/dirwatch"
	"github.com/troupe-dev/troupe/internal/editbatch"
	"github.com/troupe-dev/troupe/internal/flight"
	"github.com/troupe-dev/troupe/internal/kick"
	"github.com/troupe-dev/troupe/internal/lockfile"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// Defaults for Options.
const (
	DefaultLockTimeout = 30 * time.Second
	DefaultKeepRead    = 100
)

// Options tune a Store. The zero value is ready to use.
type Options struct {
	// Logger receives warnings (a corrupt file moved aside, a watch that
	// fell back to polling). Default: discard.
	Logger *slog.Logger
	// Now is the clock for timestamps and lock staleness. Default time.Now.
	Now func() time.Time
	// LockStale is the lock-directory stale time; keep the default (10 s)
	// when sharing a root with Claude Code.
	LockStale time.Duration
	// LockTimeout bounds how long one operation waits for a lock (on top
	// of its ctx). It is longer than LockStale so that a lock left by a
	// dead process is reclaimed rather than reported. Default 30 s.
	LockTimeout time.Duration
	// KeepRead is how many read messages an inbox keeps; older read ones
	// are pruned on the next write. Default 100; negative keeps none.
	KeepRead int
	// ForcePoll makes watches poll instead of using file-system events.
	ForcePoll bool
	// PollInterval is the polling period when watches poll.
	PollInterval time.Duration
}

// Store is a file store rooted at one folder.
type Store struct {
	root  string
	opts  Options
	log   *slog.Logger
	now   func() time.Time
	watch *dirwatch.Watcher
	// sender names this Store's own folder in inbox spools.
	sender string
	// inboxCommitHook, when set (by tests), runs just before an inbox is
	// replaced; an error from it fails the write as a full disk would.
	inboxCommitHook func(path string) error

	watchMu sync.Mutex
	watches map[*kick.Signal]func() // guarded by watchMu; open watches and their subscription's cancel

	pinMu sync.Mutex
	pins  map[string]func() // guarded by pinMu; folder watches kept for the store's life

	// teamCache holds decoded team files (teamcache.go).
	teamCache teamCache
	// edits group-commits team edits (Teams.Edit).
	edits editbatch.Batches
	// taskCache holds the decoded task files of the last listing of each
	// list (taskcache.go).
	taskCache taskCache
	// lists coalesces concurrent task-list reads (Tasks.List).
	lists flight.Group[[]tasklist.Entry]

	sweepMu sync.Mutex
	swept   map[string]time.Time // guarded by sweepMu; when each folder's temp files were last swept

	mu     sync.Mutex
	closed bool // guarded by mu
}

// Open opens (creating if needed) the store rooted at root.
func Open(root string, opts Options) (*Store, error) {
	if root == "" {
		return nil, errors.New("open file store: empty root folder")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("open file store %s: %w", root, err)
	}
	for _, d := range []string{abs, filepath.Join(abs, "teams"), filepath.Join(abs, "tasks")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("open file store %s: %w", root, err)
		}
	}
	// Claude Code locks task files at their real path; resolve symlinks once
	// so that both programs name the same lock directories.
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("open file store %s: %w", root, err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.LockStale == 0 {
		opts.LockStale = lockfile.DefaultStale
	}
	if opts.LockTimeout == 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	if opts.KeepRead == 0 {
		opts.KeepRead = DefaultKeepRead
	}
	w, err := dirwatch.New(dirwatch.Options{PollInterval: opts.PollInterval, ForcePoll: opts.ForcePoll, Logger: opts.Logger})
	if err != nil {
		return nil, fmt.Errorf("open file store %s: %w", root, err)
	}
	return &Store{root: real, opts: opts, log: opts.Logger, now: opts.Now, watch: w, sender: senderName()}, nil
}

// senderName returns a name unique to this Store among all processes.
func senderName() string {
	var b [6]byte
	rand.Read(b[:])
	return fmt.Sprintf("%d-%x", os.Getpid(), b)
}

// Root returns the store's root folder (with symlinks resolved).
func (s *Store) Root() string { return s.root }

// Close stops the store's watches (their channels are closed). Operations after Close fail. Close is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.closeWatches()
	s.pinMu.Lock()
	for _, cancel := range s.pins {
		cancel()
	}
	s.pins = nil
	s.pinMu.Unlock()
	return s.watch.Close()
}

func (s *Store) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// pin keeps the watch of dir alive until Close, so that a process that
// sends one message after another does not add and remove the same
// file-system watch for every message.
func (s *Store) pin(dir string) {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	if _, ok := s.pins[dir]; ok || s.isClosed() {
		return
	}
	_, cancel, err := s.watch.Subscribe(dir, func(string) bool { return false })
	if err != nil {
		return
	}
	if s.pins == nil {
		s.pins = map[string]func(){}
	}
	s.pins[dir] = cancel
}

// teamDir returns the folder of a team (canonical names only).
func (s *Store) teamDir(name string) string {
	return filepath.Join(s.root, "teams", team.Sanitize(name))
}

// inboxDir returns the inboxes folder of a team.
func (s *Store) inboxDir(teamName string) string {
	return filepath.Join(s.root, "teams", team.SanitizePath(teamName), "inboxes")
}

// inboxPath returns the inbox file of agent in team.
func (s *Store) inboxPath(teamName, agent string) string {
	return filepath.Join(s.inboxDir(teamName), team.SanitizePath(agent)+".json")
}

// listDir returns the folder of a task list.
func (s *Store) listDir(list string) string {
	return filepath.Join(s.root, "tasks", team.SanitizePath(list))
}

// Temp files (<file>.tmp.<hex>) older than staleTempAge are left by a
// writer that died between creating and renaming them; a writer of their
// folder (of a task list's, a reader) removes them, at most once per
// sweepEvery per folder and store.
const (
	staleTempAge = time.Minute
	sweepEvery   = time.Minute
)

// sweepTemps removes stale temp files from dir if it was not swept within
// sweepEvery. Call it after writing a file in dir; failures are logged.
func (s *Store) sweepTemps(dir string) {
	now := s.now()
	if !s.sweepDue(dir, now) {
		return
	}
	n, err := atomicfile.SweepDir(dir, staleTempAge, now)
	s.logSweep(dir, n, err)
}

// sweepListed is sweepTemps for a caller that has just read dir's entries.
func (s *Store) sweepListed(dir string, entries []fs.DirEntry) {
	now := s.now()
	if !s.sweepDue(dir, now) {
		return
	}
	n, err := atomicfile.SweepEntries(dir, entries, staleTempAge, now)
	s.logSweep(dir, n, err)
}

// sweepDue reports whether dir is due for a sweep, and if so counts it as
// swept now.
func (s *Store) sweepDue(dir string, now time.Time) bool {
	s.sweepMu.Lock()
	defer s.sweepMu.Unlock()
	if last, ok := s.swept[dir]; ok && now.Sub(last) < sweepEvery {
		return false
	}
	if s.swept == nil {
		s.swept = map[string]time.Time{}
	}
	s.swept[dir] = now
	return true
}

// logSweep logs the outcome of a sweep that removed n files.
func (s *Store) logSweep(dir string, n int, err error) {
	if err != nil {
		s.log.Warn("remove stale temp files", "dir", dir, "removed", n, "err", err)
	} else if n > 0 {
		s.log.Info("removed stale temp files left by a dead writer", "dir", dir, "removed", n)
	}
}

// ErrSymlink is matched by the error of an operation on a folder below the
// root that is a symbolic link (teams/<team>, its inboxes and spool folders,
// tasks/<list>): the store refuses it rather than follow it, since a planted
// link would send its reads and writes elsewhere.
var ErrSymlink = errors.New("file store: symbolic link refused")

// checkNoLinks returns an error matching ErrSymlink, naming the link, if
// path or a folder between the root and it is a symbolic link. Parts that
// do not exist yet are fine: the store creates them as folders.
func (s *Store) checkNoLinks(path string) error {
	rel, err := filepath.Rel(s.root, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s is not below the store root %s", path, s.root)
	}
	cur := s.root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s: %w", cur, ErrSymlink)
		}
	}
	return nil
}

// lock takes the lock directory of target (target + ".lock"), waiting at
// most LockTimeout beyond ctx.
func (s *Store) lock(ctx context.Context, target string) (*lockfile.Lock, error) {
	return s.lockUnless(ctx, target, nil)
}

// lockUnless is lock, given up with abandon's error when abandon (nil:
// never) returns one while the lock is held by another
// (lockfile.Options.Abandon).
func (s *Store) lockUnless(ctx context.Context, target string, abandon func() error) (*lockfile.Lock, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, s.opts.LockTimeout,
		fmt.Errorf("lock %s not taken within %v", filepath.Base(target)+".lock", s.opts.LockTimeout))
	defer cancel()
	return lockfile.Acquire(ctx, target+".lock", lockfile.Options{
		Stale:   s.opts.LockStale,
		Now:     s.now,
		Watcher: s.watch,
		Logger:  s.log,
		Abandon: abandon,
	})
}

// checkTeamName refuses names that are not canonical team names, so no path
// built from them can leave the root.
func checkTeamName(name string) error {
	if err := team.ValidateTeamName(name); err != nil {
		return err
	}
	if team.Sanitize(name) != name {
		return &team.NameError{Kind: "team", Name: name, Reason: fmt.Sprintf("not canonical (stored teams are named %q)", team.Sanitize(name))}
	}
	return nil
}

// Teams is the team.Store view of a Store.
type Teams struct{ s *Store }

// Mail is the mailbox.Store view of a Store.
type Mail struct{ s *Store }

// Tasks is the tasklist.Store view of a Store.
type Tasks struct{ s *Store }

// Teams returns the store's teams.
func (s *Store) Teams() *Teams { return &Teams{s} }

// Mail returns the store's mailboxes.
func (s *Store) Mail() *Mail { return &Mail{s} }

// Tasks returns the store's task lists.
func (s *Store) Tasks() *Tasks { return &Tasks{s} }

// written returns err, the error of an atomic write, or nil when the new
// file is in place and only its folder's sync failed
// (atomicfile.ErrUnsynced): the write happened, and reporting it failed
// would make the caller do it again (a second task, a teammate added
// twice, a message sent twice) or give up on what it did (a claim). That
// case is logged, naming what (args are the log's key-value pairs).
func (s *Store) written(err error, what string, args ...any) error {
	if errors.Is(err, atomicfile.ErrUnsynced) {
		s.log.Warn(what+" written but its folder not synced", append(args, "err", err)...)
		return nil
	}
	return err
}
