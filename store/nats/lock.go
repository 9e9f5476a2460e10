package nats

import (
	"bytes"
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
	rev, _, err := s.createLock(ctx, kv, key, val)
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
	// The watch is the fast path, the stream's leader the truth: a
	// waiter's watch on a cluster was seen to miss the holder's delete, and
	// every host of a team then waited for a free lock (bench team, 100 and
	// 1,000 teammates on three servers). The leader is asked every
	// LockStale/4 while waiting.
	check := time.NewTicker(s.opts.LockStale / 4)
	defer check.Stop()
	if s.nc.ConnectedClusterName() == "" {
		check.Stop() // one server: its watch misses nothing, and a stopped ticker never fires
	}
	var seen uint64 // revision of the holder's entry; 0 when free
	create := func() (*heldLock, error) {
		rev, holder, err := s.createLock(ctx, kv, key, val)
		if err == nil {
			return &heldLock{key: key, val: val, rev: rev, unlock: s.held(kv, key, val, rev)}, nil
		}
		if !isConflict(err) {
			return fail(err)
		}
		if holder > seen {
			seen = holder // someone else took it
			stale.Reset(s.opts.LockStale)
		}
		return nil, nil
	}
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return fail(errors.New("lock watch ended"))
			}
			if e != nil && e.Operation() == jetstream.KeyValuePut {
				if e.Revision() > seen {
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
			if l, err := create(); l != nil || err != nil {
				return l, err
			}
		case <-check.C:
			actx, cancel := context.WithTimeout(ctx, attemptTimeout)
			e, err := s.leaderEntry(actx, kv, key)
			cancel()
			switch {
			case err == nil && e.op == jetstream.KeyValuePut:
				if e.rev > seen {
					seen = e.rev // a refresh or a new holder the watch has not shown yet
					stale.Reset(s.opts.LockStale)
				}
				continue
			case err == nil || errors.Is(err, jetstream.ErrKeyNotFound):
				if seen != 0 {
					s.log.Warn("nats store: a lock is free on the stream's leader; its watch had not said so", "bucket", kv.Bucket(), "key", key, "watch revision", seen, "leader revision", e.rev)
				}
				seen = 0
				if l, err := create(); l != nil || err != nil {
					return l, err
				}
			default:
				continue // asked again at the next tick
			}
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

// createLock creates the lock entry key of kv with val. A KV Create of a
// deleted key asks a replica for the delete marker's revision, and a
// replica that has not applied the delete yet answers with the holder's
// entry: the Create then fails as if the lock were held, and a waiter that
// took that for someone else's lock waited for an entry that never came
// (bench team on three servers: every host waited on a free lock). So a
// conflict is checked with the stream's leader: a deleted entry is
// replaced by compare-and-swap on the delete marker's revision; a held one
// is returned as holder (its revision) with the conflict.
func (s *Store) createLock(ctx context.Context, kv jetstream.KeyValue, key string, val []byte) (rev, holder uint64, err error) {
	rev, err = kv.Create(ctx, key, val)
	if !isConflict(err) || s.nc.ConnectedClusterName() == "" {
		// One server has no replica behind it: its Create already
		// replaces a deleted entry, and the watch shows the holder.
		return rev, 0, err
	}
	actx, cancel := context.WithTimeout(ctx, attemptTimeout)
	e, lerr := s.leaderEntry(actx, kv, key)
	cancel()
	switch {
	case lerr != nil:
		return 0, 0, err // not found (purged meanwhile) or no answer: the caller tries again
	case e.op == jetstream.KeyValuePut:
		if bytes.Equal(e.value, val) {
			return e.rev, 0, nil // this very Create, landed by an earlier attempt
		}
		return 0, e.rev, err
	}
	rev, err = kv.Update(ctx, key, val, e.rev)
	if isConflict(err) {
		// Taken by another right after the delete; its entry arrives on
		// the watch, or the leader is asked at the next check.
		return 0, 0, err
	}
	return rev, 0, err
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
