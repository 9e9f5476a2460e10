package nats

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// lostReplyKV stores the first Update of a key ending in ".lock" and then
// reports it failed, as a refresh whose reply was lost past its deadline.
type lostReplyKV struct {
	jetstream.KeyValue
	lost    atomic.Bool
	updates atomic.Int32
}

func (kv *lostReplyKV) Update(ctx context.Context, key string, value []byte, last uint64) (uint64, error) {
	rev, err := kv.KeyValue.Update(ctx, key, value, last)
	kv.updates.Add(1)
	if err == nil && kv.lost.CompareAndSwap(false, true) {
		return 0, errors.New("reply lost")
	}
	return rev, err
}

// TestLockRefreshLandedUnseen: a lock refresh reported failed that did
// land is the holder's own: the next refresh and the release go on from
// it. Before, the next refresh's conflict was taken for a takeover, the
// refreshing stopped and the release failed, so the lock stayed held
// until LockStale.
func TestLockRefreshLandedUnseen(t *testing.T) {
	s := openInternal(t, Options{Namespace: "refresh", LockStale: 300 * time.Millisecond})
	faulty := &lostReplyKV{KeyValue: s.tasks.(retryKV).KeyValue}
	kv := retryKV{KeyValue: faulty, s: s}
	ctx := t.Context()
	unlock, err := s.lock(ctx, kv, "list.lock")
	if err != nil {
		t.Fatal(err)
	}
	// The lost refresh and three after it, unless the refreshing stops
	// (the defect): then the wait ends at its bound.
	wait, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for faulty.updates.Load() < 4 && wait.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	if n := faulty.updates.Load(); n < 4 {
		t.Errorf("%d refreshes of the lock in 5 s; want the lost one and three after it (the refreshing stopped)", n)
	}
	unlock()
	if e, err := s.leaderEntry(ctx, kv, "list.lock"); err != nil || e.Operation() != jetstream.KeyValueDelete {
		t.Errorf("lock entry after unlock = %v, %v; want deleted", e.Operation(), err)
	}
}
