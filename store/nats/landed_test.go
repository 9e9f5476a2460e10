package nats

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// TestLanded: a retried write is recognised as landed only when the
// leader holds exactly its bytes at a later revision.
func TestLanded(t *testing.T) {
	s := openInternal(t, Options{Namespace: "landed"})
	ctx := t.Context()
	kv := s.tasks.(retryKV)
	rev, err := kv.Create(ctx, "k", []byte("mine"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		key   string
		value string
		last  uint64
		want  bool
	}{
		{"my bytes after last", "k", "mine", 0, true},
		{"someone else's bytes", "k", "theirs", 0, false},
		{"not after last", "k", "mine", rev, false},
		{"no such key", "nokey", "mine", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := kv.landed(ctx, tt.key, []byte(tt.value), tt.last)
			if ok != tt.want || (ok && got != rev) || err != nil {
				t.Errorf("landed(%q, %q, %d) = %d, %v, %v; want %v (revision %d), no error", tt.key, tt.value, tt.last, got, ok, err, tt.want, rev)
			}
		})
	}
	// The leader's copy of a deleted key is its delete marker: not found.
	if _, err := kv.Put(ctx, "gone", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if e, err := s.leaderEntry(ctx, kv, "gone"); err != nil || e.Operation() != jetstream.KeyValueDelete {
		t.Errorf("leaderEntry(a deleted key) = %v, %v; want its delete marker", e.Operation(), err)
	}
	if _, err := s.leaderGet(ctx, kv, "gone"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("leaderGet(a deleted key) = %v; want ErrKeyNotFound", err)
	}
	if e, err := s.leaderGet(ctx, kv, "k"); err != nil || string(e.Value()) != "mine" || e.Revision() != rev {
		t.Errorf("leaderGet(k) = %v, %v; want mine at revision %d", e, err, rev)
	}

	// A leader that cannot be asked is no answer: an error the retry
	// takes as transient, never "not landed" (which a retried create would
	// take for a conflict, and store the task again under the next id).
	dead, cancelDead := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancelDead()
	if _, ok, err := kv.landed(dead, "k", []byte("mine"), 0); ok || err == nil || !transient(err) {
		t.Errorf("landed with no answer = %v, %v; want a transient error", ok, err)
	}

	// The newest message of an inbox, by a wildcard subject, as a Read
	// checks its scan against it.
	ack, err := s.js.Publish(ctx, s.inboxSubject("crew", "bob")+".m1", []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if seq, _, err := s.leaderLast(ctx, s.mailStream, s.inboxSubject("crew", "bob")+".*"); err != nil || seq != ack.Sequence {
		t.Errorf("leaderLast(inbox of bob) = %d, %v; want %d", seq, err, ack.Sequence)
	}
	if _, _, err := s.leaderLast(ctx, s.mailStream, s.inboxSubject("crew", "nobody")+".*"); err == nil {
		t.Error("leaderLast(an empty inbox) succeeded; want message not found")
	}
}

// FuzzDecodeMsgGet: any answer decodes to a message with a sequence, or
// to an error; never a panic.
func FuzzDecodeMsgGet(f *testing.F) {
	for _, seed := range []string{
		`{"type":"io.nats.jetstream.api.v1.stream_msg_get_response","message":{"subject":"$KV.b.k","seq":7,"data":"bWluZQ==","time":"2026-12-03T12:00:00Z"}}`,
		`{"error":{"code":404,"err_code":10037,"description":"no message found"}}`,
		`{"message":{"seq":0}}`, `{"message":{"seq":1,"data":"!!"}}`, `{}`, `null`, ``, `[`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeMsgGet(b)
		if err == nil && m.Seq == 0 {
			t.Errorf("decodeMsgGet(%q) = sequence 0 without an error", b)
		}
	})
}

// TestKVOperation: a message's headers name a delete or a purge; anything
// else is a put.
func TestKVOperation(t *testing.T) {
	tests := []struct {
		hdr  string
		want jetstream.KeyValueOp
	}{
		{"", jetstream.KeyValuePut},
		{"NATS/1.0\r\n\r\n", jetstream.KeyValuePut},
		{"NATS/1.0\r\nKV-Operation: DEL\r\n\r\n", jetstream.KeyValueDelete},
		{"NATS/1.0\r\nNats-Msg-Id: x\r\nKV-Operation: PURGE\r\nNats-Rollup: sub\r\n\r\n", jetstream.KeyValuePurge},
		{"NATS/1.0\r\nkv-operation:DEL\r\n\r\n", jetstream.KeyValueDelete},
		{"NATS/1.0\r\nKV-Operation: OTHER\r\n\r\n", jetstream.KeyValuePut},
		{"NATS/1.0\r\nX-KV-Operation: DEL\r\n\r\n", jetstream.KeyValuePut},
	}
	for _, tt := range tests {
		if got := kvOperation([]byte(tt.hdr)); got != tt.want {
			t.Errorf("kvOperation(%q) = %v; want %v", tt.hdr, got, tt.want)
		}
	}
}

// FuzzKVOperation: headers that do not mention the operation are a put;
// none panics.
func FuzzKVOperation(f *testing.F) {
	for _, seed := range []string{"", "NATS/1.0\r\nKV-Operation: DEL\r\n\r\n", "NATS/1.0\r\nKV-Operation: PURGE\r\n\r\n", "KV-Operation", ":\r\n:", "NATS/1.0 404\r\n\r\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := kvOperation(b)
		if !bytes.Contains(bytes.ToLower(b), []byte("kv-operation")) && got != jetstream.KeyValuePut {
			t.Errorf("kvOperation(%q) = %v; want a put", b, got)
		}
	})
}

// lostAckKV stores the create of a key that match selects and answers
// that the key exists, as a retried create does when its first attempt
// landed and the answer was lost; its reads of those keys find nothing,
// as a replica that has not applied the create yet.
type lostAckKV struct {
	jetstream.KeyValue
	match func(key string) bool
}

func (kv lostAckKV) Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (uint64, error) {
	if !kv.match(key) {
		return kv.KeyValue.Create(ctx, key, value, opts...)
	}
	if _, err := kv.KeyValue.Create(ctx, key, value, opts...); err != nil {
		return 0, err
	}
	return 0, jetstream.ErrKeyExists
}

func (kv lostAckKV) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	if kv.match(key) {
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
	s.tasks = lostAckKV{KeyValue: real, match: func(key string) bool { return strings.Contains(key, ".t.") }}
	got, _, err := s.Tasks().Create(ctx, "crew", tasklist.Task{Subject: "once"})
	if err != nil {
		t.Fatalf("Create = %v; want the landed create taken as this call's", err)
	}
	s.tasks = real
	all := crewTasks(t, s)
	if got.ID != "1" || len(all) != 1 {
		t.Errorf("Create gave task %q; the list holds %d tasks; want task 1 stored once", got.ID, len(all))
	}
}

// hiddenKV is a bucket read from a replica that does not show key yet.
type hiddenKV struct {
	jetstream.KeyValue
	key string
}

func (kv hiddenKV) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	if key == kv.key {
		return nil, jetstream.ErrKeyNotFound
	}
	return kv.KeyValue.Get(ctx, key)
}

// TestTeamCreateTakenBehindReplica: a create of a team that exists, read
// back from a replica that does not show it yet, is refused as taken
// (team.ErrExists), not retried until "too much contention".
func TestTeamCreateTakenBehindReplica(t *testing.T) {
	s := openInternal(t, Options{Namespace: "takenteam"})
	ctx := t.Context()
	c := team.Config{Name: "crew", CreatedAt: 1, LeadAgentID: team.AgentID(team.LeadName, "crew")}
	if err := s.Teams().Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	s.teams = hiddenKV{KeyValue: s.teams, key: teamKey("crew")}
	c.CreatedAt = 2
	if err := s.Teams().Create(ctx, c); !errors.Is(err, team.ErrExists) {
		t.Errorf("Create of a taken name read behind = %v; want team.ErrExists", err)
	}
}

// claimedKV stores a task create, has a claimer take the task at once,
// and answers the create with the conflict its retry gets when the first
// attempt landed but its answer was lost.
type claimedKV struct {
	jetstream.KeyValue
}

func (kv claimedKV) Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (uint64, error) {
	if !strings.Contains(key, ".t.") {
		return kv.KeyValue.Create(ctx, key, value, opts...)
	}
	rev, err := kv.KeyValue.Create(ctx, key, value, opts...)
	if err != nil {
		return 0, err
	}
	var t tasklist.Task
	if err := json.Unmarshal(value, &t); err != nil {
		return 0, err
	}
	t.Owner, t.Status = "quick", tasklist.StatusInProgress
	claimed, err := json.Marshal(t)
	if err != nil {
		return 0, err
	}
	if _, err := kv.KeyValue.Update(ctx, key, claimed, rev); err != nil {
		return 0, err
	}
	return 0, jetstream.ErrKeyExists
}

// TestCreateLandedThenClaimed: a task create whose first attempt landed,
// and whose task a claimer took before the retry looked, is this create's
// own: the task is stored once (a rolling restart stored it again under
// the next id, as the key no longer held the created bytes).
func TestCreateLandedThenClaimed(t *testing.T) {
	s := openInternal(t, Options{Namespace: "landedclaimed"})
	ctx := t.Context()
	real := s.tasks
	s.tasks = claimedKV{real}
	got, _, err := s.Tasks().Create(ctx, "crew", tasklist.Task{Subject: "once"})
	s.tasks = real
	if err != nil {
		t.Fatalf("Create = %v; want the landed create taken as this call's", err)
	}
	all := crewTasks(t, s)
	if got.ID != "1" || len(all) != 1 || all[0].Owner != "quick" {
		t.Errorf("Create gave task %q; the list holds %+v; want task 1 stored once, owned by its claimer", got.ID, all)
	}
}

// TestCreateOverLeftoverTask: a task left under the next id from before
// the counter (a list whose counter was lost) is not taken for this
// create's own, even with the same bytes: the create takes the next id.
func TestCreateOverLeftoverTask(t *testing.T) {
	s := openInternal(t, Options{Namespace: "leftover"})
	ctx := t.Context()
	draft := tasklist.Task{ID: "1", Subject: "same", Status: tasklist.StatusPending}
	data, err := json.Marshal(draft)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.tasks.Put(ctx, taskKey("crew", "1"), data); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.Tasks().Create(ctx, "crew", tasklist.Task{Subject: "same"})
	if err != nil {
		t.Fatal(err)
	}
	all := crewTasks(t, s)
	if got.ID != "2" || len(all) != 2 {
		t.Errorf("Create over a leftover task 1 gave task %q; the list holds %d tasks; want task 2 and both kept", got.ID, len(all))
	}
}

// lostCounterKV stores the first write of a list's id counter and
// answers it as an attempt whose answer never came.
type lostCounterKV struct {
	jetstream.KeyValue
	lost *bool
}

func (kv lostCounterKV) Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (uint64, error) {
	rev, err := kv.KeyValue.Create(ctx, key, value, opts...)
	if err == nil && strings.HasSuffix(key, ".high") && !*kv.lost {
		*kv.lost = true
		return 0, context.DeadlineExceeded
	}
	return rev, err
}

// TestCounterWriteLost: an id counter write whose answer was lost is not
// taken as this create's when the counter then holds its value (another
// creator may have written that same value, and both would take the id):
// the create advances the counter again and stores the task once, under
// the next id.
func TestCounterWriteLost(t *testing.T) {
	s := openInternal(t, Options{Namespace: "lostcounter"})
	ctx := t.Context()
	lost := false
	s.tasks = retryKV{KeyValue: lostCounterKV{KeyValue: s.tasks.(retryKV).KeyValue, lost: &lost}, s: s}
	got, _, err := s.Tasks().Create(ctx, "crew", tasklist.Task{Subject: "once"})
	if err != nil {
		t.Fatalf("Create after a lost counter write = %v; want it retried", err)
	}
	all := crewTasks(t, s)
	if !lost || got.ID != "2" || len(all) != 1 {
		t.Errorf("Create gave task %q (counter write lost: %v); the list holds %d tasks; want task 2, id 1 left unused, stored once", got.ID, lost, len(all))
	}
}

// crewTasks returns the tasks of list crew, as the list reads them.
func crewTasks(t *testing.T, s *Store) []tasklist.Task {
	t.Helper()
	all, err := tasklist.New(s.Tasks(), "crew").Tasks(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return all
}
