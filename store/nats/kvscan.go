package nats

import (
	"context"
	"encoding/json"
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
	req, err := json.Marshal(multiLastReq{MultiLast: []string{prefix + filter}})
	if err != nil {
		return nil, 0, err
	}
	inbox := s.nc.NewRespInbox()
	ch := make(chan *natsgo.Msg, multiLastMax+1)
	sub, err := s.nc.ChanSubscribe(inbox, ch)
	if err != nil {
		return nil, 0, fmt.Errorf("list %s: %w", filter, err)
	}
	defer sub.Unsubscribe()
	if err := s.nc.PublishRequest("$JS.API.DIRECT.GET.KV_"+kv.Bucket(), inbox, req); err != nil {
		return nil, 0, fmt.Errorf("list %s: %w", filter, err)
	}
	var out []jetstream.KeyValueEntry
	var newest uint64
	for {
		var m *natsgo.Msg
		select {
		case m = <-ch:
		case <-ctx.Done():
			return nil, 0, fmt.Errorf("list %s: %w", filter, context.Cause(ctx))
		}
		if m.Header.Get(statusHeader) == "413" {
			return nil, 0, fmt.Errorf("list %s: more than %d keys: %w", filter, multiLastMax, errNoDirect)
		}
		r, err := parseDirectReply(m.Header, m.Data)
		if err != nil {
			return nil, 0, fmt.Errorf("list %s: %w", filter, err)
		}
		if r.end {
			if r.pending > 0 {
				return nil, 0, fmt.Errorf("list %s: answer cut short with %d keys left: %w", filter, r.pending, errNoDirect)
			}
			return out, newest, nil
		}
		key, ok := strings.CutPrefix(r.subject, prefix)
		if !ok {
			return nil, 0, fmt.Errorf("list %s: message %d on %q, outside the bucket", filter, r.seq, r.subject)
		}
		newest = max(newest, r.seq)
		if op := kvOperationOf(m.Header); op != jetstream.KeyValuePut {
			continue
		}
		out = append(out, kvEntry{bucket: kv.Bucket(), key: key, value: r.data, rev: r.seq, op: jetstream.KeyValuePut})
	}
}
