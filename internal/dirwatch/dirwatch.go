// Package dirwatch tells subscribers that entries of a directory changed.
// One Watcher serves a whole process (or one owner within it): however many
// subscribers watch a directory, it is watched once (one inotify watch,
// reference-counted), and the Watcher uses one inotify instance in total.
//
// Delivery contract: a subscription is a 1-slot channel that receives a
// coalesced "something changed" kick whenever an entry whose base name
// satisfies the subscriber's match function is created, written, removed,
// renamed or has its metadata changed, after Subscribe returned. Kicks carry
// no detail and may be spurious; many changes may give one kick. A
// subscriber therefore subscribes first, then reads the state it cares
// about, then waits for a kick and re-reads. Sends never block the Watcher:
// a subscriber that does not drain its channel only misses duplicate kicks.
//
// When the kernel's event queue overflows, every subscriber is kicked so
// that it rescans. When notifications are unavailable (fsnotify cannot be
// created, the watch limit is reached, or Options.ForcePoll is set) the
// affected directories are polled every Options.PollInterval instead, with
// the same delivery contract.
//
// A Watcher is safe for concurrent use. Close stops its goroutines and
// waits for them.
package dirwatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// ErrClosed is returned by Subscribe after Close.
var ErrClosed = errors.New("dirwatch: watcher closed")

// DefaultPollInterval is the polling period used when Options.PollInterval
// is zero.
const DefaultPollInterval = 200 * time.Millisecond

// Options configures a Watcher. The zero value is ready to use.
type Options struct {
	// PollInterval is the period of the polling fallback. Zero means
	// DefaultPollInterval.
	PollInterval time.Duration
	// ForcePoll never uses file-system notifications: every directory is
	// polled. For tests, and for file systems that do not notify (network
	// mounts).
	ForcePoll bool
	// Logger receives the fallback warning and diagnostics. Nil discards.
	Logger *slog.Logger
}

// hooks replace the fsnotify calls in tests, to inject failures.
type hooks struct {
	newFS func() (*fsnotify.Watcher, error)
	add   func(fsw *fsnotify.Watcher, dir string) error
}

// Watcher multiplexes directory-change notifications to subscribers.
type Watcher struct {
	pollInterval time.Duration
	log          *slog.Logger
	add          func(fsw *fsnotify.Watcher, dir string) error
	fsw          *fsnotify.Watcher // nil when every directory is polled; fixed after New
	stop         chan struct{}     // closed by Close
	wg           sync.WaitGroup

	// structMu serializes Subscribe, unsubscribe and Close, which may add or
	// remove inotify watches; it is held across those syscalls. The event
	// and poll loops never take it.
	structMu sync.Mutex

	// mu guards the fields below. It is held only for map updates, never
	// across I/O, channel sends or callbacks.
	mu          sync.Mutex
	closed      bool
	dirs        map[string]*watchedDir // by canonical absolute path
	pollRunning bool                   // the poll loop goroutine is running
	warned      bool                   // the fallback warning was logged
}

// watchedDir is one watched directory and its subscribers. Its fields are
// guarded by Watcher.mu.
type watchedDir struct {
	path string
	subs map[*subscription]struct{}
	poll bool                // polled rather than watched by fsnotify
	snap map[string]entryKey // last polled listing, when poll
}

type subscription struct {
	dir   string
	match func(name string) bool
	ch    chan struct{} // kicked unless fn is set
	fn    func()        // called instead of kicking ch (SubscribeFunc)
	once  sync.Once
}

// fire tells s that a matching entry changed.
func (s *subscription) fire() {
	if s.fn != nil {
		s.fn()
		return
	}
	kick(s.ch)
}

// New returns a Watcher. If file-system notifications cannot be set up it
// still succeeds, logs one warning and polls.
func New(opts Options) (*Watcher, error) {
	return newWatcher(opts, hooks{})
}

func newWatcher(opts Options, h hooks) (*Watcher, error) {
	if opts.PollInterval < 0 {
		return nil, fmt.Errorf("dirwatch: negative poll interval %v", opts.PollInterval)
	}
	if h.newFS == nil {
		h.newFS = func() (*fsnotify.Watcher, error) { return fsnotify.NewBufferedWatcher(256) }
	}
	if h.add == nil {
		h.add = (*fsnotify.Watcher).Add
	}
	w := &Watcher{
		pollInterval: opts.PollInterval,
		log:          opts.Logger,
		add:          h.add,
		stop:         make(chan struct{}),
		dirs:         make(map[string]*watchedDir),
	}
	if w.pollInterval == 0 {
		w.pollInterval = DefaultPollInterval
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	if !opts.ForcePoll {
		fsw, err := h.newFS()
		if err != nil {
			w.warnFallback("file-system notifications unavailable; polling every directory", err)
		} else {
			w.fsw = fsw
			w.wg.Go(w.eventLoop)
		}
	}
	return w, nil
}

// Subscribe watches dir for changes to entries whose base name satisfies
// match (nil matches every name). It returns a 1-slot channel of kicks and
// a cancel function, which is idempotent and safe to call after Close. dir
// must exist. After Close it returns ErrClosed. match is called from the
// Watcher's goroutines: it must be fast and must not call the Watcher.
func (w *Watcher) Subscribe(dir string, match func(name string) bool) (<-chan struct{}, func(), error) {
	s := &subscription{match: match, ch: make(chan struct{}, 1)}
	cancel, err := w.subscribe(dir, s)
	if err != nil {
		return nil, nil, err
	}
	return s.ch, cancel, nil
}

// SubscribeFunc is Subscribe with fn called, from the Watcher's
// goroutines, instead of a channel kicked; fn must be fast and must not
// block or call the Watcher. A subscriber that would otherwise need a
// goroutine to forward kicks (one per watch, a thousand for a thousand
// idle teammates) needs none.
func (w *Watcher) SubscribeFunc(dir string, match func(name string) bool, fn func()) (func(), error) {
	return w.subscribe(dir, &subscription{match: match, fn: fn})
}

func (w *Watcher) subscribe(dir string, s *subscription) (func(), error) {
	match := s.match
	path, err := canonical(dir)
	if err != nil {
		return nil, fmt.Errorf("dirwatch: subscribe %s: %w", dir, err)
	}
	if match == nil {
		match = func(string) bool { return true }
	}
	s.dir, s.match = path, match

	w.structMu.Lock()
	defer w.structMu.Unlock()
	w.mu.Lock()
	closed, d := w.closed, w.dirs[path]
	w.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if d == nil {
		d, err = w.watchDir(path)
		if err != nil {
			return nil, fmt.Errorf("dirwatch: subscribe %s: %w", dir, err)
		}
	}
	w.mu.Lock()
	d.subs[s] = struct{}{}
	w.mu.Unlock()
	return func() { s.once.Do(func() { w.unsubscribe(s) }) }, nil
}

// watchDir starts watching path, by fsnotify or else by polling, and
// registers it. structMu must be held.
func (w *Watcher) watchDir(path string) (*watchedDir, error) {
	d := &watchedDir{path: path, subs: make(map[*subscription]struct{}), poll: w.fsw == nil}
	if !d.poll {
		if err := w.add(w.fsw, path); err != nil {
			if !isResourceLimit(err) {
				return nil, err
			}
			w.warnFallback("cannot watch directory; polling it", err, "dir", path)
			d.poll = true
		}
	}
	if d.poll {
		d.snap = snapshot(path) // the baseline: changes after Subscribe kick
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dirs[path] = d
	if d.poll {
		w.startPollLocked()
	}
	return d, nil
}

// unsubscribe removes s, and the directory's watch with its last
// subscriber.
func (w *Watcher) unsubscribe(s *subscription) {
	w.structMu.Lock()
	defer w.structMu.Unlock()
	w.mu.Lock()
	d := w.dirs[s.dir]
	if w.closed || d == nil {
		w.mu.Unlock()
		return
	}
	delete(d.subs, s)
	removeWatch := false
	if len(d.subs) == 0 {
		delete(w.dirs, s.dir)
		removeWatch = !d.poll
	}
	w.mu.Unlock()
	if removeWatch {
		// Fails harmlessly if the kernel already dropped the watch (the
		// directory was removed).
		if err := w.fsw.Remove(s.dir); err != nil && !errors.Is(err, fsnotify.ErrNonExistentWatch) {
			w.log.Debug("dirwatch: remove watch", "dir", s.dir, "err", err)
		}
	}
}

// Close stops watching, stops all goroutines and waits for them. No kicks
// are sent after Close returns; subscription channels are not closed. It is
// idempotent.
func (w *Watcher) Close() error {
	w.structMu.Lock()
	defer w.structMu.Unlock()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.dirs = map[string]*watchedDir{}
	w.mu.Unlock()
	close(w.stop)
	var err error
	if w.fsw != nil {
		err = w.fsw.Close()
	}
	w.wg.Wait()
	if err != nil {
		return fmt.Errorf("dirwatch: close: %w", err)
	}
	return nil
}

// goFuncLocked starts f as a goroutine owned by w unless w is closed.
// mu must be held.
func (w *Watcher) goFuncLocked(f func()) bool {
	if w.closed {
		return false
	}
	w.wg.Go(f)
	return true
}

// warnFallback logs the first fallback to polling at Warn, later ones at
// Debug.
func (w *Watcher) warnFallback(msg string, err error, args ...any) {
	w.mu.Lock()
	first := !w.warned
	w.warned = true
	w.mu.Unlock()
	level := slog.LevelDebug
	if first {
		level = slog.LevelWarn
	}
	w.log.Log(context.Background(), level, "dirwatch: "+msg, append(args, "err", err)...)
}

// kick sends a non-blocking wake-up on ch.
func kick(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// canonical returns the absolute, symlink-free path of an existing
// directory, so that two spellings of one directory share one watch.
func canonical(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	path, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", errors.New("not a directory")
	}
	return path, nil
}

// isResourceLimit reports whether err means the kernel refused a watch for
// lack of resources (inotify watch or instance limits, file descriptors,
// memory), in which case polling is the fallback.
func isResourceLimit(err error) bool {
	for _, e := range []error{syscall.ENOSPC, syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
