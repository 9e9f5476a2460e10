// Package tasklisttest is the conformance suite for tasklist.Store
// implementations: Run checks the raw Store contract (id allocation,
// compare-and-swap, round trips, locking, concurrency) and the rules that
// tasklist.List enforces on top of the store (dependencies, cycles,
// claiming, release, metadata merge, delete).
//
// An implementation's test calls Run with a function that opens a fresh,
// empty store:
//
//	func TestConformance(t *testing.T) {
//		tasklisttest.Run(t, func(t *testing.T) tasklist.Store {
//			s := mem.New(mem.Options{})
//			t.Cleanup(func() { s.Close() })
//			return s.Tasks()
//		})
//	}
package tasklisttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/troupe-dev/troupe/tasklist"
)

// Concurrency of the race tests.
const (
	Goroutines = 16
	ClaimTasks = 50
)

// Run runs the suite. open must return a new, empty store for each call;
// it runs once per subtest.
func Run(t *testing.T, open func(t *testing.T) tasklist.Store) {
	t.Run("Store", func(t *testing.T) { runStore(t, open) })
	t.Run("List", func(t *testing.T) { runList(t, open) })
}

func runStore(t *testing.T, open func(t *testing.T) tasklist.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s tasklist.Store)
	}{
		{"CreateAllocatesInOrder", testCreateAllocatesInOrder},
		{"IDsNeverReused", testIDsNeverReused},
		{"GetUnknown", testGetUnknown},
		{"PutCompareAndSwap", testPutCompareAndSwap},
		{"TryPutCompareAndSwap", testTryPutCompareAndSwap},
		{"DeleteCompareAndSwap", testDeleteCompareAndSwap},
		{"RoundTrip", testRoundTrip},
		{"NoAliasing", testNoAliasing},
		{"ListsIndependent", testListsIndependent},
		{"ListNumericOrder", testListNumericOrder},
		{"ConcurrentCreate", testConcurrentCreate},
		{"Lock", testLock},
		{"Watch", testWatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, open(t))
		})
	}
}

// cmpTask compares tasks treating nil and empty slices and maps alike.
var cmpTask = cmpopts.EquateEmpty()

func mustCreate(t *testing.T, s tasklist.Store, list string, task tasklist.Task) (tasklist.Task, tasklist.Revision) {
	t.Helper()
	got, rev, err := s.Create(t.Context(), list, task)
	if err != nil {
		t.Fatalf("Create(%q, %q) error: %v", list, task.Subject, err)
	}
	return got, rev
}

func mustGet(t *testing.T, s tasklist.Store, list, id string) (tasklist.Task, tasklist.Revision) {
	t.Helper()
	got, rev, err := s.Get(t.Context(), list, id)
	if err != nil {
		t.Fatalf("Get(%q, %q) error: %v", list, id, err)
	}
	return got, rev
}

func listIDs(t *testing.T, s tasklist.Store, list string) []string {
	t.Helper()
	entries, err := s.List(t.Context(), list)
	if err != nil {
		t.Fatalf("List(%q) error: %v", list, err)
	}
	ids := []string{}
	for _, e := range entries {
		ids = append(ids, e.Task.ID)
	}
	return ids
}

func pending(subject string) tasklist.Task {
	return tasklist.Task{Subject: subject, Description: "about " + subject, Status: tasklist.StatusPending}
}

func testCreateAllocatesInOrder(t *testing.T, s tasklist.Store) {
	for i, want := range []string{"1", "2", "3"} {
		in := pending(fmt.Sprintf("task %d", i+1))
		in.ID = "99" // ignored
		got, rev, err := s.Create(t.Context(), "l", in)
		if err != nil {
			t.Fatalf("Create #%d error: %v", i+1, err)
		}
		if got.ID != want {
			t.Errorf("Create #%d id = %q; want %q", i+1, got.ID, want)
		}
		if rev == 0 {
			t.Errorf("Create #%d revision = 0; want non-zero", i+1)
		}
		stored, srev := mustGet(t, s, "l", want)
		in.ID = want
		if diff := cmp.Diff(in, stored, cmpTask); diff != "" {
			t.Errorf("Get(%q) mismatch (-want +got):\n%s", want, diff)
		}
		if srev != rev {
			t.Errorf("Get(%q) revision = %d; want %d (from Create)", want, srev, rev)
		}
	}
}

func testIDsNeverReused(t *testing.T, s tasklist.Store) {
	ctx := t.Context()
	for range 3 {
		mustCreate(t, s, "l", pending("x"))
	}
	_, rev := mustGet(t, s, "l", "3")
	if err := s.Delete(ctx, "l", "3", rev); err != nil {
		t.Fatalf("Delete(3) error: %v", err)
	}
	if got, _ := mustCreate(t, s, "l", pending("after delete of the highest")); got.ID != "4" {
		t.Errorf("Create after deleting 3 of 3 = id %q; want \"4\"", got.ID)
	}
	for _, id := range []string{"4", "2"} {
		_, rev := mustGet(t, s, "l", id)
		if err := s.Delete(ctx, "l", id, rev); err != nil {
			t.Fatalf("Delete(%s) error: %v", id, err)
		}
	}
	if got, _ := mustCreate(t, s, "l", pending("after deleting 4 and 2")); got.ID != "5" {
		t.Errorf("Create after deleting 4 and 2 = id %q; want \"5\"", got.ID)
	}
	if diff := cmp.Diff([]string{"1", "5"}, listIDs(t, s, "l")); diff != "" {
		t.Errorf("List ids mismatch (-want +got):\n%s", diff)
	}
}

func testGetUnknown(t *testing.T, s tasklist.Store) {
	mustCreate(t, s, "l", pending("x"))
	tests := []struct{ list, id string }{
		{"l", "2"},
		{"l", "0"},
		{"absent", "1"},
	}
	for _, tt := range tests {
		_, _, err := s.Get(t.Context(), tt.list, tt.id)
		if !errors.Is(err, tasklist.ErrNotFound) {
			t.Errorf("Get(%q, %q) error = %v; want ErrNotFound", tt.list, tt.id, err)
		}
	}
	if ids := listIDs(t, s, "absent"); len(ids) != 0 {
		t.Errorf("List(absent) = %v; want empty", ids)
	}
}

func testPutCompareAndSwap(t *testing.T, s tasklist.Store) {
	ctx := t.Context()
	orig, rev1 := mustCreate(t, s, "l", pending("x"))
	next := orig.Clone()
	next.Subject = "changed"
	rev2, err := s.Put(ctx, "l", next, rev1)
	if err != nil {
		t.Fatalf("Put with current revision error: %v", err)
	}
	if rev2 == rev1 || rev2 == 0 {
		t.Errorf("Put revision = %d; want non-zero and different from %d", rev2, rev1)
	}
	stale := orig.Clone()
	stale.Subject = "stale"
	if _, err := s.Put(ctx, "l", stale, rev1); !errors.Is(err, tasklist.ErrConflict) {
		t.Errorf("Put with stale revision error = %v; want ErrConflict", err)
	}
	if _, err := s.Put(ctx, "l", stale, 0); !errors.Is(err, tasklist.ErrConflict) {
		t.Errorf("Put with revision 0 over an existing task error = %v; want ErrConflict", err)
	}
	got, rev := mustGet(t, s, "l", orig.ID)
	if got.Subject != "changed" || rev != rev2 {
		t.Errorf("after a refused Put, Get = (subject %q, rev %d); want (\"changed\", %d)", got.Subject, rev, rev2)
	}
	ghost := pending("ghost")
	ghost.ID = "42"
	if _, err := s.Put(ctx, "l", ghost, rev2); !errors.Is(err, tasklist.ErrNotFound) {
		t.Errorf("Put of absent task 42 error = %v; want ErrNotFound", err)
	}
	if ids := listIDs(t, s, "l"); !slices.Equal(ids, []string{"1"}) {
		t.Errorf("after Put of an absent task, List = %v; want [1]", ids)
	}
}

func testDeleteCompareAndSwap(t *testing.T, s tasklist.Store) {
	ctx := t.Context()
	orig, rev1 := mustCreate(t, s, "l", pending("x"))
	next := orig.Clone()
	next.Owner = "alice"
	rev2, err := s.Put(ctx, "l", next, rev1)
	if err != nil {
		t.Fatalf("Put error: %v", err)
	}
	if err := s.Delete(ctx, "l", orig.ID, rev1); !errors.Is(err, tasklist.ErrConflict) {
		t.Errorf("Delete with stale revision error = %v; want ErrConflict", err)
	}
	if got, _ := mustGet(t, s, "l", orig.ID); got.Owner != "alice" {
		t.Errorf("after a refused Delete, owner = %q; want \"alice\"", got.Owner)
	}
	if err := s.Delete(ctx, "l", orig.ID, rev2); err != nil {
		t.Fatalf("Delete with current revision error: %v", err)
	}
	if _, _, err := s.Get(ctx, "l", orig.ID); !errors.Is(err, tasklist.ErrNotFound) {
		t.Errorf("Get after Delete error = %v; want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "l", orig.ID, rev2); !errors.Is(err, tasklist.ErrNotFound) {
		t.Errorf("second Delete error = %v; want ErrNotFound", err)
	}
}

func testRoundTrip(t *testing.T, s tasklist.Store) {
	ctx := t.Context()
	mustCreate(t, s, "l", pending("blocker"))
	in := tasklist.Task{
		Subject:     "Write tests ✓ \"quoted\" <html>",
		Description: "multi\nline",
		ActiveForm:  "Writing tests",
		Owner:       "helper",
		Status:      tasklist.StatusInProgress,
		Blocks:      []string{},
		BlockedBy:   []string{"1"},
		Metadata: map[string]json.RawMessage{
			"lease":  json.RawMessage(`{"holder":"helper","until":1796217216231}`),
			"labels": json.RawMessage(`["a","b"]`),
		},
		Extra: map[string]json.RawMessage{"x_troupe": json.RawMessage(`{"kept":true}`)},
	}
	got, rev := mustCreate(t, s, "l", in)
	want := in.Clone()
	want.ID = got.ID
	if diff := cmp.Diff(want, got, cmpTask); diff != "" {
		t.Errorf("Create returned a different task (-want +got):\n%s", diff)
	}
	stored, _ := mustGet(t, s, "l", got.ID)
	if diff := cmp.Diff(want, stored, cmpTask); diff != "" {
		t.Errorf("Get after Create mismatch (-want +got):\n%s", diff)
	}
	want.Status = tasklist.StatusCompleted
	want.Metadata["done"] = json.RawMessage(`true`)
	want.Extra["other"] = json.RawMessage(`1`)
	if _, err := s.Put(ctx, "l", want, rev); err != nil {
		t.Fatalf("Put error: %v", err)
	}
	stored, _ = mustGet(t, s, "l", got.ID)
	if diff := cmp.Diff(want, stored, cmpTask); diff != "" {
		t.Errorf("Get after Put mismatch (-want +got):\n%s", diff)
	}
	entries, err := s.List(ctx, "l")
	if err != nil || len(entries) != 2 {
		t.Fatalf("List = %d entries, %v; want 2, nil", len(entries), err)
	}
	if diff := cmp.Diff(want, entries[1].Task, cmpTask); diff != "" {
		t.Errorf("List entry mismatch (-want +got):\n%s", diff)
	}
}

// testNoAliasing checks that neither the task passed in nor the task handed
// out shares memory with what the store keeps.
func testNoAliasing(t *testing.T, s tasklist.Store) {
	in := pending("x")
	in.Blocks = []string{"7"}
	in.Metadata = map[string]json.RawMessage{"k": json.RawMessage(`"v"`)}
	in.Extra = map[string]json.RawMessage{"e": json.RawMessage(`1`)}
	got, _ := mustCreate(t, s, "l", in)
	want := in.Clone()
	want.ID = got.ID

	in.Blocks[0] = "mutated"
	in.Metadata["k"][1] = 'X'
	in.Metadata["new"] = json.RawMessage(`1`)
	in.Extra["e"] = json.RawMessage(`2`)
	got.Blocks[0] = "mutated"
	got.Metadata["k2"] = json.RawMessage(`1`)
	got2, _ := mustGet(t, s, "l", got.ID)
	if diff := cmp.Diff(want, got2, cmpTask); diff != "" {
		t.Errorf("stored task changed through a caller's copy (-want +got):\n%s", diff)
	}
	got2.Metadata["k"][1] = 'Y'
	got2.BlockedBy = append(got2.BlockedBy, "9")
	entries, err := s.List(t.Context(), "l")
	if err != nil {
		t.Fatalf("List error: %v", err)
	}
	if diff := cmp.Diff(want, entries[0].Task, cmpTask); diff != "" {
		t.Errorf("stored task changed through Get's result (-want +got):\n%s", diff)
	}
}

func testListsIndependent(t *testing.T, s tasklist.Store) {
	a, _ := mustCreate(t, s, "alpha", pending("in alpha"))
	mustCreate(t, s, "alpha", pending("in alpha too"))
	b, _ := mustCreate(t, s, "beta", pending("in beta"))
	if a.ID != "1" || b.ID != "1" {
		t.Errorf("first ids of two lists = %q, %q; want \"1\", \"1\"", a.ID, b.ID)
	}
	if got, _ := mustGet(t, s, "beta", "1"); got.Subject != "in beta" {
		t.Errorf("Get(beta, 1).Subject = %q; want \"in beta\"", got.Subject)
	}
	if _, _, err := s.Get(t.Context(), "beta", "2"); !errors.Is(err, tasklist.ErrNotFound) {
		t.Errorf("Get(beta, 2) error = %v; want ErrNotFound (2 exists only in alpha)", err)
	}
	if ids := listIDs(t, s, "beta"); !slices.Equal(ids, []string{"1"}) {
		t.Errorf("List(beta) = %v; want [1]", ids)
	}
}

func testListNumericOrder(t *testing.T, s tasklist.Store) {
	var want []string
	for i := 1; i <= 12; i++ {
		mustCreate(t, s, "l", pending(fmt.Sprint(i)))
		want = append(want, fmt.Sprint(i))
	}
	if diff := cmp.Diff(want, listIDs(t, s, "l")); diff != "" {
		t.Errorf("List order mismatch (-want +got):\n%s", diff)
	}
}

func testConcurrentCreate(t *testing.T, s tasklist.Store) {
	ids := make([]string, Goroutines)
	var wg sync.WaitGroup
	for i := range Goroutines {
		wg.Go(func() {
			got, _, err := s.Create(t.Context(), "l", pending(fmt.Sprint("g", i)))
			if err != nil {
				t.Errorf("goroutine %d: Create error: %v", i, err)
				return
			}
			ids[i] = got.ID
		})
	}
	wg.Wait()
	slices.SortFunc(ids, func(a, b string) int { return int(tasklist.IDNum(a)) - int(tasklist.IDNum(b)) })
	var want []string
	for i := 1; i <= Goroutines; i++ {
		want = append(want, fmt.Sprint(i))
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("ids from %d concurrent Creates mismatch (-want +got):\n%s", Goroutines, diff)
	}
}

func testLock(t *testing.T, s tasklist.Store) {
	ctx := t.Context()
	unlock, err := s.Lock(ctx, "l")
	if err != nil {
		t.Fatalf("Lock(l) error: %v", err)
	}
	other, err := s.Lock(ctx, "other")
	if err != nil {
		t.Fatalf("Lock(other) while l is held error: %v; lists must lock independently", err)
	}
	other()

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if u, err := s.Lock(short, "l"); err == nil {
		u()
		t.Fatal("second Lock(l) while held succeeded; want an error once ctx is done")
	}

	acquired := make(chan func(), 1)
	go func() {
		u, err := s.Lock(ctx, "l")
		if err != nil {
			t.Errorf("Lock(l) after unlock error: %v", err)
			u = func() {}
		}
		acquired <- u
	}()
	select {
	case u := <-acquired:
		u()
		t.Fatal("Lock(l) succeeded while the lock was still held")
	default:
	}
	unlock()
	select {
	case u := <-acquired:
		u()
	case <-time.After(5 * time.Second):
		t.Fatal("Lock(l) still waiting 5s after unlock")
	}
}
