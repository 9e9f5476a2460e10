// Package mem is an in-memory store of teams, mailboxes and task lists, for
// tests and single-process runs. One Store holds all three; its views
// Teams, Mail and Tasks implement team.Store, mailbox.Store and
// tasklist.Store with the semantics documented in those packages and
// checked by their conformance suites (teamtest, mailboxtest,
// tasklisttest).
//
// Everything that crosses the API is deep-copied, so callers never alias
// the store's state. Nothing is persisted: the data lives as long as the
// Store.
//
// A Store is safe for concurrent use. Long operations (a team Update's fn,
// a Delete's check, a task list Lock) hold a per-team or per-list lock, not
// the store-wide mutex, so they block only users of the same team or list.
package mem

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// DefaultKeepRead is the default number of read messages an inbox keeps.
const DefaultKeepRead = 100

// Options tune a Store. The zero value is ready to use.
type Options struct {
	// KeepRead is how many read messages an inbox keeps; older read ones
	// are pruned on every write to the inbox. Zero means DefaultKeepRead;
	// negative keeps none.
	KeepRead int
	// Now stamps messages sent without a timestamp. Default time.Now.
	Now func() time.Time
}

// Store is an in-memory backend for teams, mailboxes and task lists.
type Store struct {
	keepRead int
	now      func() time.Time
	done     chan struct{} // closed by Close

	teamLocks keyedLock // one per team name: Update and Delete
	listLocks keyedLock // one per task list: tasklist.Store.Lock

	// mu guards the fields below. It is never held across a callback, a
	// keyed lock wait or a channel operation that can block.
	mu       sync.Mutex
	closed   bool
	teams    map[string]team.Config
	inboxes  map[inboxKey][]mailbox.Message
	lists    map[string]*taskList
	rev      tasklist.Revision // last revision handed out, store-wide
	watchers map[inboxKey]map[*watcher]struct{}
}

// New returns an empty Store.
func New(opts Options) *Store {
	if opts.KeepRead == 0 {
		opts.KeepRead = DefaultKeepRead
	}
	if opts.KeepRead < 0 {
		opts.KeepRead = 0
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Store{
		keepRead:  opts.KeepRead,
		now:       opts.Now,
		done:      make(chan struct{}),
		teamLocks: keyedLock{m: map[string]chan struct{}{}},
		listLocks: keyedLock{m: map[string]chan struct{}{}},
		teams:     map[string]team.Config{},
		inboxes:   map[inboxKey][]mailbox.Message{},
		lists:     map[string]*taskList{},
		watchers:  map[inboxKey]map[*watcher]struct{}{},
	}
}

// Teams returns the team.Store view of s.
func (s *Store) Teams() *Teams { return &Teams{s} }

// Mail returns the mailbox.Store view of s.
func (s *Store) Mail() *Mail { return &Mail{s} }

// Tasks returns the tasklist.Store view of s.
func (s *Store) Tasks() *Tasks { return &Tasks{s} }

// Close ends the store: later calls of every view fail with the package's
// ErrClosed, waiting lock acquisitions give up, and every Watch channel is
// closed. Close is idempotent and always returns nil.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	var ws []*watcher
	for _, set := range s.watchers {
		for w := range set {
			ws = append(ws, w)
		}
	}
	s.watchers = map[inboxKey]map[*watcher]struct{}{}
	s.mu.Unlock()
	for _, w := range ws {
		w.Close()
	}
	return nil
}

// keyedLock is a set of ctx-aware mutexes, one per key, created on first
// use. Each is a 1-slot channel: holding the lock means having filled it.
type keyedLock struct {
	mu sync.Mutex
	m  map[string]chan struct{} // guarded by mu; entries are never removed
}

// lock takes the lock of key, waiting until it is free, ctx is done or
// done is closed. The returned unlock may be called more than once.
func (k *keyedLock) lock(ctx context.Context, done <-chan struct{}, key string) (unlock func(), err error) {
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	k.mu.Lock()
	ch, ok := k.m[key]
	if !ok {
		ch = make(chan struct{}, 1)
		k.m[key] = ch
	}
	k.mu.Unlock()
	select {
	case ch <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-done:
		return nil, errStoreClosed
	}
	var once sync.Once
	return func() { once.Do(func() { <-ch }) }, nil
}

// errStoreClosed is translated into the calling package's ErrClosed.
var errStoreClosed = errors.New("mem: store closed")

// isClosed reports whether Close was called.
func (s *Store) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

var (
	_ team.Store     = (*Teams)(nil)
	_ mailbox.Store  = (*Mail)(nil)
	_ tasklist.Store = (*Tasks)(nil)
)
