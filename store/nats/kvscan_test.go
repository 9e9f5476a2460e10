package nats

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// TestScanKVDirect: a bucket's keys are listed by one multi_last direct
// get, with what a watch of the keys lists (the newest value of each key,
// deleted and purged keys left out, the newest revision seen counting
// their markers), and no consumer made; more keys than one answer holds
// are listed by the watch.
func TestScanKVDirect(t *testing.T) {
	s := openInternal(t, Options{Namespace: "kvscan"})
	ctx := t.Context()
	kv := s.tasks
	for i := range 6 {
		if _, err := kv.Put(ctx, taskKey("crew", fmt.Sprint(i)), []byte(fmt.Sprintf("v%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := kv.Put(ctx, taskKey("crew", "2"), []byte("v2 again")); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, taskKey("other", "1"), []byte("not crew")); err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(ctx, taskKey("crew", "3")); err != nil {
		t.Fatal(err)
	}
	if err := kv.Purge(ctx, taskKey("crew", "5")); err != nil {
		t.Fatal(err)
	}
	filter := token("crew") + ".t.*"
	show := func(es []jetstream.KeyValueEntry) []string {
		var out []string
		for _, e := range es {
			out = append(out, fmt.Sprintf("%s=%s@%d", e.Key(), e.Value(), e.Revision()))
		}
		slices.Sort(out)
		return out
	}
	direct, dNewest, err := s.scanKVDirect(ctx, kv, filter)
	if err != nil {
		t.Fatal(err)
	}
	watched, wNewest, err := scanOnce(ctx, kv, filter)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := show(direct), show(watched); !slices.Equal(got, want) || len(got) != 4 {
		t.Errorf("direct get lists %v; a watch lists %v (want 4 keys: 0, 1, 2 again, 4)", got, want)
	}
	if dNewest != wNewest {
		t.Errorf("direct get's newest revision %d; the watch's %d", dNewest, wNewest)
	}
	// Requests of the JetStream API (a consumer made and deleted), counted
	// by the server: none but the two asking for the count.
	apiTotal := func() uint64 {
		t.Helper()
		ai, err := s.js.AccountInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ai.API.Total
	}
	before := apiTotal()
	if _, err := s.scanKV(ctx, kv, filter); err != nil {
		t.Fatal(err)
	}
	if n := apiTotal() - before; n != 1 {
		t.Errorf("a scan made %d requests of the JetStream API; want none", n-1)
	}

	// More keys than one answer holds: the watch lists them.
	for i := range multiLastMax + 10 {
		if _, err := kv.Put(ctx, taskKey("big", fmt.Sprint(i)), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	big := token("big") + ".t.*"
	if _, _, err := s.scanKVDirect(ctx, kv, big); !errors.Is(err, errNoDirect) {
		t.Errorf("direct get of %d keys: %v; want errNoDirect", multiLastMax+10, err)
	}
	all, err := s.scanKV(ctx, kv, big)
	if err != nil || len(all) != multiLastMax+10 {
		t.Errorf("scan of %d keys = %d entries, %v", multiLastMax+10, len(all), err)
	}
}
