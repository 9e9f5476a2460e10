package nats_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/team"
)

// behindKV answers Get for the keys in frozen with the entry they had
// when frozen, as a replica that has not applied the newest writes does
// (a Get is a direct get, which any replica may answer).
type behindKV struct {
	jetstream.KeyValue
	mu     sync.Mutex
	frozen map[string]jetstream.KeyValueEntry // guarded by mu
}

func (kv *behindKV) freeze(t *testing.T, key string) {
	t.Helper()
	e, err := kv.KeyValue.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	kv.frozen[key] = e
}

func (kv *behindKV) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	kv.mu.Lock()
	e, ok := kv.frozen[key]
	kv.mu.Unlock()
	if ok {
		return e, nil
	}
	return kv.KeyValue.Get(ctx, key)
}

// landsTwiceKV stores an Update of a team, then answers it with the
// conflict its retry gets when the first attempt landed but its reply was
// lost. Lock entries pass through: the store's retries already tell their
// landed writes apart (retryKV), and a lock taken by a write answered as
// lost was never released, so the concurrent adds waited for it forever
// (one run in a hundred, when a waiter took the lock by compare-and-swap
// on the holder's delete).
type landsTwiceKV struct {
	jetstream.KeyValue
}

func (kv landsTwiceKV) Update(ctx context.Context, key string, value []byte, last uint64) (uint64, error) {
	if strings.HasSuffix(key, ".lock") {
		return kv.KeyValue.Update(ctx, key, value, last)
	}
	if _, err := kv.KeyValue.Update(ctx, key, value, last); err != nil {
		return 0, err
	}
	_, err := kv.KeyValue.Update(ctx, key, value, last)
	return 0, err
}

// intrude adds member name to team crew through kv, without the team's
// lock.
func intrude(ctx context.Context, kv jetstream.KeyValue, name string) error {
	e, err := kv.Get(ctx, "crew")
	if err != nil {
		return err
	}
	var c team.Config
	if err := json.Unmarshal(e.Value(), &c); err != nil {
		return err
	}
	c.Members = append(c.Members, team.Member{Name: name, AgentID: name + "@crew"})
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	_, err = kv.Update(ctx, "crew", data, e.Revision())
	return err
}

// TestClusterLockedUpdates: on a three-node cluster (R3), a team update
// under the team's lock tells a lost compare-and-swap's causes apart. A
// read from a replica that has not applied the last holder's write is read
// again from the leader and the update lands; so does a write whose first
// attempt landed. A writer that did not hold the lock, or the lock taken
// over, is still an error, naming which.
func TestClusterLockedUpdates(t *testing.T) {
	c := startCluster(t)
	open := func(i int) *natsstore.Store {
		// One server each: a Get is answered by that server's replica.
		s, err := natsstore.Open(t.Context(), fmt.Sprintf("nats://127.0.0.1:%d", c.nodes[i].port), natsstore.Options{Namespace: "locked", Replicas: 3})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b, d := open(0), open(1), open(2)
	var bkv *behindKV
	natsstore.WrapTeamsKV(b, func(kv jetstream.KeyValue) jetstream.KeyValue {
		bkv = &behindKV{KeyValue: kv, frozen: map[string]jetstream.KeyValueEntry{}}
		return bkv
	})
	var raw jetstream.KeyValue // a's bucket, without the team's lock
	natsstore.WrapTeamsKV(a, func(kv jetstream.KeyValue) jetstream.KeyValue { raw = kv; return kv })
	natsstore.WrapTeamsKV(d, func(kv jetstream.KeyValue) jetstream.KeyValue { return landsTwiceKV{kv} })
	ctx := t.Context()
	if _, err := team.Create(ctx, a.Teams(), team.CreateOptions{Name: "crew", Now: testNow, Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	add := func(s *natsstore.Store, name string) error {
		_, err := team.AddMember(ctx, s.Teams(), "crew", team.Member{Name: name}, testNow)
		return err
	}
	members := func() []string {
		t.Helper()
		// From the leader: a's server may not have applied the last
		// acknowledged write yet (CI once counted 51 of 52 members
		// through a's replica).
		var names []string
		for _, m := range natsstore.LeaderTeam(t, a, "crew").Members {
			names = append(names, m.Name)
		}
		return names
	}

	t.Run("read behind the leader", func(t *testing.T) {
		bkv.freeze(t, "crew")
		if err := add(a, "amy"); err != nil {
			t.Fatal(err)
		}
		// b's replica still has the team without amy.
		if err := add(b, "bo"); err != nil {
			t.Fatalf("AddMember after a stale read = %v; want the update read again from the leader and stored", err)
		}
		got := strings.Join(members(), ",")
		if !strings.Contains(got, "amy") || !strings.Contains(got, "bo") {
			t.Errorf("members = %s; want amy and bo", got)
		}
	})

	t.Run("a refusal read behind the leader", func(t *testing.T) {
		bkv.freeze(t, "crew")
		if err := add(a, "cal"); err != nil {
			t.Fatal(err)
		}
		// b's replica still has the team without cal: fn refuses, and
		// writes nothing that could conflict.
		if _, err := team.UpdateMember(ctx, b.Teams(), "crew", "cal", func(m *team.Member) error { m.Color = "red"; return nil }); err != nil {
			t.Fatalf("UpdateMember of a member a replica has not seen = %v; want the refusal checked with the leader and the update stored", err)
		}
		cfg, err := a.Teams().Get(ctx, "crew")
		if err != nil {
			t.Fatal(err)
		}
		if m, ok := cfg.Member("cal"); !ok || m.Color != "red" {
			t.Errorf("cal = %+v, %v; want red", m, ok)
		}
	})

	t.Run("a retried write that landed", func(t *testing.T) {
		before := len(members())
		if err := add(d, "dee"); err != nil {
			t.Fatalf("AddMember whose write landed before its conflict = %v; want success", err)
		}
		if got := len(members()); got != before+1 {
			t.Errorf("team has %d members; want %d (dee added once)", got, before+1)
		}
	})

	t.Run("a writer without the lock", func(t *testing.T) {
		_, err := a.Teams().Update(ctx, "crew", func(cfg *team.Config) error {
			return intrude(ctx, raw, "ivy")
		})
		if err == nil || !strings.Contains(err.Error(), "written after the lock was taken") {
			t.Errorf("Update with a write by a writer without the lock = %v; want an error naming that writer", err)
		}
	})

	t.Run("the lock taken over", func(t *testing.T) {
		_, err := a.Teams().Update(ctx, "crew", func(cfg *team.Config) error {
			if _, err := raw.Put(ctx, "crew.lock", []byte("someone else")); err != nil {
				return err
			}
			return intrude(ctx, raw, "ike")
		})
		if err == nil || !strings.Contains(err.Error(), `no longer this writer's (now held by "someone else"`) {
			t.Errorf("Update after the lock was taken over = %v; want an error naming the takeover", err)
		}
		if err := raw.Delete(ctx, "crew.lock"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("concurrent", func(t *testing.T) {
		// Three hosts on three servers, as bench team runs them.
		bkv.mu.Lock()
		clear(bkv.frozen)
		bkv.mu.Unlock()
		before := len(members())
		const each = 15
		var wg sync.WaitGroup
		errs := make(chan error, 3*each)
		for i, s := range []*natsstore.Store{a, b, d} {
			wg.Go(func() {
				for j := range each {
					if err := add(s, fmt.Sprintf("m%d-%d", i, j)); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("AddMember from three hosts: %v; want every update stored", err)
		}
		if got := len(members()); got != before+3*each {
			t.Errorf("team has %d members; want %d", got, before+3*each)
		}
	})
}

// deafKV is a bucket whose watches never show a delete, as a lock
// waiter's watch on a cluster was seen to miss its holder's; puts it
// forwards are counted on puts.
type deafKV struct {
	jetstream.KeyValue
	puts chan struct{}
}

func (kv deafKV) Watch(ctx context.Context, keys string, opts ...jetstream.WatchOpt) (jetstream.KeyWatcher, error) {
	w, err := kv.KeyValue.Watch(ctx, keys, opts...)
	if err != nil {
		return nil, err
	}
	return relayWatch(ctx, w, kv.puts, true), nil
}

type deafWatcher struct {
	jetstream.KeyWatcher
	out chan jetstream.KeyValueEntry
}

func (w *deafWatcher) Updates() <-chan jetstream.KeyValueEntry { return w.out }

// TestClusterLockWaiterAsksLeader: a waiter for a team's lock whose watch
// never shows the holder's delete still takes the lock once it is free: it
// asks the stream's leader. Before, it waited forever (bench team on three
// servers: every host waited on a free lock).
func TestClusterLockWaiterAsksLeader(t *testing.T) {
	c := startCluster(t)
	open := func(i int, stale time.Duration) *natsstore.Store {
		s, err := natsstore.Open(t.Context(), fmt.Sprintf("nats://127.0.0.1:%d", c.nodes[i].port), natsstore.Options{Namespace: "deaf", Replicas: 3, LockStale: stale})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, e := open(0, 0), open(2, time.Second)
	puts := make(chan struct{}, 1)
	natsstore.WrapTeamsKV(e, func(kv jetstream.KeyValue) jetstream.KeyValue { return deafKV{KeyValue: kv, puts: puts} })
	ctx := t.Context()
	if _, err := team.Create(ctx, a.Teams(), team.CreateOptions{Name: "crew", Now: testNow, Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	_, err := a.Teams().Update(ctx, "crew", func(*team.Config) error {
		go func() {
			// Far longer than the leader's checks (every LockStale/4):
			// only a waiter that never learns of the delete runs out.
			wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			_, err := team.AddMember(wctx, e.Teams(), "crew", team.Member{Name: "eve"}, testNow)
			done <- err
		}()
		return awaitPut(puts, done) // e waits, having seen a's lock entry
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("AddMember waiting on a lock released unseen = %v; want the lock taken once free", err)
	}
}

// staleCreateKV creates a key as a KV Create does when the replica it
// asks has not applied the key's delete yet: a deleted key counts as
// existing. puts is signalled for each entry its watches forward.
type staleCreateKV struct {
	jetstream.KeyValue
	puts chan struct{}
}

func (kv staleCreateKV) Create(ctx context.Context, key string, value []byte, _ ...jetstream.KVCreateOpt) (uint64, error) {
	rev, err := kv.KeyValue.Update(ctx, key, value, 0)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", err, jetstream.ErrKeyExists)
	}
	return rev, nil
}

func (kv staleCreateKV) Watch(ctx context.Context, keys string, opts ...jetstream.WatchOpt) (jetstream.KeyWatcher, error) {
	w, err := kv.KeyValue.Watch(ctx, keys, opts...)
	if err != nil {
		return nil, err
	}
	return relayWatch(ctx, w, kv.puts, false), nil
}

// relayWatch forwards w's entries, signalling puts (without waiting) for
// each, and with putsOnly drops every entry that is not a put.
func relayWatch(ctx context.Context, w jetstream.KeyWatcher, puts chan<- struct{}, putsOnly bool) *deafWatcher {
	d := &deafWatcher{KeyWatcher: w, out: make(chan jetstream.KeyValueEntry)}
	go func() {
		defer close(d.out)
		for e := range w.Updates() {
			if e != nil && putsOnly && e.Operation() != jetstream.KeyValuePut {
				continue
			}
			if e != nil {
				select {
				case puts <- struct{}{}:
				default:
				}
			}
			select {
			case d.out <- e:
			case <-ctx.Done():
				return
			}
		}
	}()
	return d
}

// TestClusterLockAfterStaleCreate: a waiter whose Create of the freed lock
// entry is refused by a replica still holding the old entry takes the lock
// all the same: the leader says it is deleted. Before, the waiter took the
// refusal for another holder and waited forever for its entry (bench team
// on three servers: every host waited on a free lock).
func TestClusterLockAfterStaleCreate(t *testing.T) {
	c := startCluster(t)
	open := func(i int) *natsstore.Store {
		s, err := natsstore.Open(t.Context(), fmt.Sprintf("nats://127.0.0.1:%d", c.nodes[i].port), natsstore.Options{Namespace: "stalecreate", Replicas: 3})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, e := open(0), open(2)
	puts := make(chan struct{}, 1)
	natsstore.WrapTeamsKV(e, func(kv jetstream.KeyValue) jetstream.KeyValue { return staleCreateKV{KeyValue: kv, puts: puts} })
	ctx := t.Context()
	if _, err := team.Create(ctx, a.Teams(), team.CreateOptions{Name: "crew", Now: testNow, Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"eve", "eli"} { // the second finds the lock entry deleted, not absent
		done := make(chan error, 1)
		_, err := a.Teams().Update(ctx, "crew", func(*team.Config) error {
			go func() {
				wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				defer cancel()
				_, err := team.AddMember(wctx, e.Teams(), "crew", team.Member{Name: name}, testNow)
				done <- err
			}()
			return awaitPut(puts, done) // e waits, having seen a's lock entry
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("AddMember(%s) waiting on a lock whose Create a replica refuses = %v; want the lock taken once free", name, err)
		}
	}
}

// awaitPut waits for the waiting store's watch to forward a put, unless
// its AddMember ended first (then its error is put back for the test to
// report): it failed before it watched, and nothing would be forwarded.
func awaitPut(puts <-chan struct{}, done chan error) error {
	select {
	case <-puts:
	case err := <-done:
		done <- err
	}
	return nil
}
