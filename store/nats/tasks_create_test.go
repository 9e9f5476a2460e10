package nats

import (
	"context"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/troupe-dev/troupe/tasklist"
)

// lostAckKV stores a task's create and answers that the key exists, as a
// retried create does when its first attempt landed and the answer was
// lost; its reads of task keys find nothing, as a replica that has not
// applied the create yet.
type lostAckKV struct {
	jetstream.KeyValue
}

func (kv lostAckKV) Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (uint64, error) {
	if !strings.Contains(key, ".t.") {
		return kv.KeyValue.Create(ctx, key, value, opts...)
	}
	if _, err := kv.KeyValue.Create(ctx, key, value, opts...); err != nil {
		return 0, err
	}
	return 0, jetstream.ErrKeyExists
}

func (kv lostAckKV) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	if strings.Contains(key, ".t.") {
		return nil, jetstream.ErrKeyNotFound
	}
	return kv.KeyValue.Get(ctx, key)
}

// TestCreateLandedOnce: a task create refused as taken, whose key holds
// this very task at the stream's leader though a replica does not show it
// yet, is this create's own: the task is stored once, under its id.
func TestCreateLandedOnce(t *testing.T) {
	s := openInternal(t, Options{Namespace: "landed"})
	ctx := t.Context()
	real := s.tasks
	s.tasks = lostAckKV{KeyValue: real}
	got, _, err := s.Tasks().Create(ctx, "crew", tasklist.Task{Subject: "once"})
	if err != nil {
		t.Fatalf("Create = %v; want the landed create taken as this call's", err)
	}
	s.tasks = real
	all, err := tasklist.New(s.Tasks(), "crew").Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "1" || len(all) != 1 {
		t.Errorf("Create gave task %q; the list holds %d tasks; want task 1 stored once", got.ID, len(all))
	}
}
