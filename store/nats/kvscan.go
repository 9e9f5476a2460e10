package nats

import (
	"context"
	"fmt"
	"strings"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Listing a bucket's keys by one direct get.
//
// A scan of a task list was a KV watch: an ordered consumer created, read
// to its end and deleted, three requests of the server's JetStream API,
// which on a cluster go through the meta leader. Every idle teammate lists
// the task list when it changes, so a thousand of them made three thousand
// such requests per task claimed. A direct get with "multi_last" answers
// with the newest message of every key under a filter instead, in one
// request that any replica answers, ended by an end of batch (status 204).
// The server answers at most multiLastMax keys (status 413 beyond) and
// stops at its pending-bytes limit (an end of batch with messages left):
// both, and a server without batched direct gets, fall back to the watch.

// multiLastMax is the most keys the server answers one multi_last get with.
const multiLastMax = 1024

// multiLastReq asks for the newest message of every subject matching one
// of MultiLast.
type multiLastReq struct {
	MultiLast []string `json:"multi_last"`
}

// scanKVDirect returns the current entries of kv under filter, without
// delete markers, and the newest revision it saw, delete markers
// included, from one multi_last direct get. errNoDirect means: scan by a
// watch instead.
func (s *Store) scanKVDirect(ctx context.Context, kv jetstream.KeyValue, filter string) ([]jetstream.KeyValueEntry, uint64, error) {
	if byConsumer.Load() {
		return nil, 0, errNoDirect
	}
	ctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	prefix := "$KV." + kv.Bucket() + "."
	var out []jetstream.KeyValueEntry
	var newest uint64
	err := s.directGet(ctx, "KV_"+kv.Bucket(), multiLastReq{MultiLast: []string{prefix + filter}}, multiLastMax+1, func(m *natsgo.Msg) (bool, error) {
		if m.Header.Get(statusHeader) == "413" {
			return true, fmt.Errorf("more than %d keys: %w", multiLastMax, errNoDirect)
		}
		r, err := parseDirectReply(m.Header, m.Data)
		if err != nil {
			return true, err
		}
		if r.end {
			if r.pending > 0 {
				return true, fmt.Errorf("answer cut short with %d keys left: %w", r.pending, errNoDirect)
			}
			return true, nil
		}
		key, ok := strings.CutPrefix(r.subject, prefix)
		if !ok {
			return true, fmt.Errorf("message %d on %q, outside the bucket", r.seq, r.subject)
		}
		newest = max(newest, r.seq)
		if kvOperationOf(m.Header) == jetstream.KeyValuePut {
			out = append(out, kvEntry{bucket: kv.Bucket(), key: key, value: r.data, rev: r.seq, op: jetstream.KeyValuePut})
		}
		return false, nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("list %s: %w", filter, err)
	}
	return out, newest, nil
}
