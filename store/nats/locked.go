package nats

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Writes under a lock entry, on a cluster.
//
// A KV Get is a direct get, which any replica of the bucket may answer:
// the one on the server the client is connected to, by preference. A
// replica is not always current: a write is acknowledged once a majority
// stored it, and the third replica applies it a moment later. So the
// holder of a team's lock can read the entry as it was before the last
// holder's write, and its compare-and-swap then fails with "wrong last
// sequence" although nobody else wrote while it held the lock (bench team
// with 1,000 teammates on three hosts of a three-node cluster failed to
// spawn on it, reported as a writer that did not hold the lock).
//
// conflictUnderLock asks the stream's leader what happened instead: the
// entry's newest revision and the lock entry. Lock entries and the keys
// they guard are in one bucket, one stream, so their revisions are one
// sequence: a revision of the key before the lock's was written by an
// earlier holder (the read was behind; read again from the leader and
// retry), one after it while the lock is still ours by a writer that did
// not hold it, and if the lock entry is no longer ours, it was taken over.

// errReadBehind marks a lost compare-and-swap whose read was older than
// writes made before the lock was taken: the caller reads again from the
// leader (leaderEntry) and retries.
var errReadBehind = errors.New("read from a replica behind the stream leader")

// conflictUnderLock explains why the compare-and-swap of value to key in
// kv, read at revision read by the holder of l, failed with cause. It
// returns the revision of the write and nil when the write is in fact there
// (an earlier attempt of it landed); otherwise an error wrapping
// errReadBehind (retry after reading from the leader), or one naming the
// writer that did not hold the lock, or the lock taken over; both of those
// wrap cause.
func (s *Store) conflictUnderLock(ctx context.Context, kv jetstream.KeyValue, l *heldLock, key string, value []byte, read uint64, cause error) (uint64, error) {
	ask := func(key string) (e kvEntry, err error) {
		err = s.retry(ctx, "leader get "+key, attemptTimeout, func(ctx context.Context, _ int) error {
			e, err = s.leaderEntry(ctx, kv, key)
			if errors.Is(err, jetstream.ErrKeyNotFound) {
				return nil // e is zero: no entry
			}
			return err
		})
		return e, err
	}
	cur, err := ask(key)
	if err != nil {
		return 0, fmt.Errorf("%w (and the leader could not be asked why: %v)", cause, err)
	}
	if cur.rev > read && cur.op == jetstream.KeyValuePut && bytes.Equal(cur.value, value) {
		return cur.rev, nil // this very write, landed by an earlier attempt
	}
	lock, err := ask(l.key)
	if err != nil {
		return 0, fmt.Errorf("%w (and the leader could not be asked why: %v)", cause, err)
	}
	if lock.op != jetstream.KeyValuePut || !bytes.Equal(lock.value, l.val) {
		holder := "nobody"
		if lock.rev != 0 && lock.op == jetstream.KeyValuePut {
			holder = fmt.Sprintf("%q", lock.value)
		}
		return 0, fmt.Errorf("the lock %s taken at revision %d is no longer this writer's (now held by %s: taken over after %v without a refresh?): %w", l.key, l.rev, holder, s.opts.LockStale, cause)
	}
	if cur.rev < l.rev {
		return 0, fmt.Errorf("read revision %d; the leader has %d, written before the lock was taken at %d: %w", read, cur.rev, l.rev, errReadBehind)
	}
	return 0, fmt.Errorf("read revision %d; revision %d was written after the lock was taken at %d, by a writer that did not hold it: %w", read, cur.rev, l.rev, cause)
}

// leaderEntry reads key of kv from the stream's leader, which is current
// with every acknowledged write, unlike a Get, which a replica may answer.
// It returns jetstream.ErrKeyNotFound for a key never written; a deleted
// key is returned with its delete or purge operation.
func (s *Store) leaderEntry(ctx context.Context, kv jetstream.KeyValue, key string) (kvEntry, error) {
	rev, data, hdr, err := s.leaderMsg(ctx, "KV_"+kv.Bucket(), "$KV."+kv.Bucket()+"."+key)
	if isMsgNotFound(err) {
		return kvEntry{}, jetstream.ErrKeyNotFound
	}
	if err != nil {
		return kvEntry{}, err
	}
	return kvEntry{bucket: kv.Bucket(), key: key, value: data, rev: rev, op: kvOperation(hdr)}, nil
}

// kvOperation returns the KV operation a message's headers (a NATS/1.0
// block) name: a put unless a KV-Operation header says DEL or PURGE.
func kvOperation(hdr []byte) jetstream.KeyValueOp {
	h, err := natsgo.DecodeHeadersMsg(hdr)
	if err != nil {
		return jetstream.KeyValuePut
	}
	return kvOperationOf(h)
}

// kvOperationOf is kvOperation of decoded headers.
func kvOperationOf(h natsgo.Header) jetstream.KeyValueOp {
	for k, vs := range h {
		if !strings.EqualFold(k, "KV-Operation") || len(vs) == 0 {
			continue
		}
		switch strings.TrimSpace(vs[0]) {
		case "DEL":
			return jetstream.KeyValueDelete
		case "PURGE":
			return jetstream.KeyValuePurge
		}
	}
	return jetstream.KeyValuePut
}

// kvEntry is a KV entry read by a message get (from the stream's leader,
// or a replica's answer to a direct get).
type kvEntry struct {
	bucket, key string
	value       []byte
	rev         uint64
	op          jetstream.KeyValueOp
}

var _ jetstream.KeyValueEntry = kvEntry{}

func (e kvEntry) Bucket() string                  { return e.bucket }
func (e kvEntry) Key() string                     { return e.key }
func (e kvEntry) Value() []byte                   { return e.value }
func (e kvEntry) Revision() uint64                { return e.rev }
func (e kvEntry) Created() time.Time              { return time.Time{} }
func (e kvEntry) Delta() uint64                   { return 0 }
func (e kvEntry) Operation() jetstream.KeyValueOp { return e.op }

// leaderGet is a KV Get answered by the stream's leader (leaderEntry),
// retried as retryKV retries a Get; a deleted key is not found.
func (s *Store) leaderGet(ctx context.Context, kv jetstream.KeyValue, key string) (e jetstream.KeyValueEntry, err error) {
	err = s.retry(ctx, "leader get "+key, attemptTimeout, func(ctx context.Context, _ int) error {
		le, err := s.leaderEntry(ctx, kv, key)
		if err == nil && le.op != jetstream.KeyValuePut {
			err = jetstream.ErrKeyNotFound
		}
		e = le
		return err
	})
	return e, err
}
