package nats

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/troupe-dev/troupe/tasklist"
)

// lockSeq numbers the locks one process takes, for their entries' values.
var lockSeq atomic.Uint64

// Lock takes list's lock: it creates the list's lock entry, or waits,
// watching the entry, until its holder deletes it or stops refreshing it
// for LockStale. It fails with ctx's cause when ctx ends first and with
// tasklist.ErrClosed when the store closes. While held, the entry is
// refreshed every LockStale/3; unlock stops that and deletes it.
func (ts *Tasks) Lock(ctx context.Context, list string) (unlock func(), err error) {
	unlock, err = ts.s.lock(ctx, ts.s.tasks, lockKey(list))
	if errors.Is(err, errStoreClosed) {
		return nil, fmt.Errorf("lock list %s: %w", list, tasklist.ErrClosed)
	}
	if err != nil {
		return nil, fmt.Errorf("lock list %s: %w", list, err)
	}
	return unlock, nil
}

// lock takes the lock entry key of kv, as Tasks.Lock describes. Its errors
// are ctx's cause, errStoreClosed, or NATS errors.
func (s *Store) lock(ctx context.Context, kv jetstream.KeyValue, key string) (unlock func(), err error) {
	l, err := s.takeLock(ctx, kv, key)
	if err != nil {
		return nil, err
	}
	return l.unlock, nil
}

// heldLock is a lock entry this store took.
type heldLock struct {
	key    string
	val    []byte // the entry's value, unique to this holder
	rev    uint64 // the revision at which it was taken
	unlock func()
}

// takeLock is lock, returning what a holder needs to tell its own writes
// from others' (conflictUnderLock).
func (s *Store) takeLock(ctx context.Context, kv jetstream.KeyValue, key string) (*heldLock, error) {
	if s.isClosed() {
		return nil, errStoreClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()
	val := fmt.Appendf(nil, "%s #%d", s.owner, lockSeq.Add(1))
	fail := func(err error) (*heldLock, error) {
		if s.isClosed() {
			return nil, errStoreClosed
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	rev, err := kv.Create(ctx, key, val)
	if err == nil {
		return &heldLock{key: key, val: val, rev: rev, unlock: s.held(kv, key, val, rev)}, nil
	}
	if !isConflict(err) {
		return fail(err)
	}
	w, err := kv.Watch(ctx, key)
	if err != nil {
		return fail(err)
	}
	defer w.Stop()
	stale := time.NewTimer(s.opts.LockStale)
	defer stale.Stop()
	var seen uint64 // revision of the holder's entry; 0 when free
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return fail(errors.New("lock watch ended"))
			}
			if e != nil && e.Operation() == jetstream.KeyValuePut {
				if e.Revision() != seen {
					seen = e.Revision()
					stale.Reset(s.opts.LockStale)
				}
				continue
			}
			if e != nil {
				seen = 0 // deleted or purged: free
			}
			if seen != 0 {
				continue
			}
			rev, err := kv.Create(ctx, key, val)
			if err == nil {
				return &heldLock{key: key, val: val, rev: rev, unlock: s.held(kv, key, val, rev)}, nil
			}
			if !isConflict(err) {
				return fail(err)
			}
			// Someone else took it; their entry arrives on the watch.
		case <-stale.C:
			if seen == 0 {
				stale.Reset(s.opts.LockStale)
				continue
			}
			rev, err := kv.Update(ctx, key, val, seen)
			if err == nil {
				s.log.Warn("nats store: took over a stale lock", "key", key, "stale", s.opts.LockStale)
				return &heldLock{key: key, val: val, rev: rev, unlock: s.held(kv, key, val, rev)}, nil
			}
			if !isConflict(err) {
				return fail(err)
			}
			stale.Reset(s.opts.LockStale)
		case <-ctx.Done():
			return fail(context.Cause(ctx))
		}
	}
}

// held refreshes a taken lock until the returned unlock is called, which
// deletes the lock entry if it is still ours.
func (s *Store) held(kv jetstream.KeyValue, key string, val []byte, rev uint64) func() {
	// current is written only by the refresher and read by unlock after
	// finished is closed: the channel orders them, no lock needed.
	current := rev
	done := make(chan struct{})
	finished := make(chan struct{})
	if !s.goFunc(func(ctx context.Context) {
		defer close(finished)
		t := time.NewTicker(s.opts.LockStale / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			rctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
			nrev, err := kv.Update(rctx, key, val, current)
			if isConflict(err) {
				// An earlier refresh reported failed (its deadline passed
				// while it was on its way) may have landed: the entry is
				// still ours at a newer revision, not taken over.
				if r, ok, _ := s.landed(rctx, kv, key, val, current); ok {
					nrev, err = r, nil
				}
			}
			cancel()
			if err != nil {
				s.log.Error("nats store: refresh lock", "bucket", kv.Bucket(), "key", key, "err", err)
				if isConflict(err) {
					return // taken over: nothing left to refresh
				}
				continue
			}
			current = nrev
		}
	}) {
		close(finished)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-finished
			if s.isClosed() {
				return // the entry goes stale and is taken over
			}
			ctx, cancel := context.WithTimeout(context.Background(), s.opts.RequestTimeout)
			defer cancel()
			err := kv.Delete(ctx, key, jetstream.LastRevision(current))
			if isConflict(err) {
				if r, ok, _ := s.landed(ctx, kv, key, val, current); ok {
					err = kv.Delete(ctx, key, jetstream.LastRevision(r)) // a refresh reported failed had landed
				}
			}
			if err != nil {
				s.log.Warn("nats store: release lock", "bucket", kv.Bucket(), "key", key, "err", err)
			}
		})
	}
}
