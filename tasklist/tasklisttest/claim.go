package tasklisttest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/tasklist"
)

func testClaimFirstReady(t *testing.T, s tasklist.Store) {
	ctx := t.Context()
	l := tasklist.New(s, listName)
	mk(t, l, tasklist.Draft{Subject: "owned", Owner: "x"})
	mk(t, l, tasklist.Draft{Subject: "done"})
	update(t, l, "2", tasklist.Update{Status: status(tasklist.StatusCompleted)})
	mk(t, l, tasklist.Draft{Subject: "blocker"})
	mk(t, l, tasklist.Draft{Subject: "blocked", BlockedBy: []string{"3"}})
	mk(t, l, tasklist.Draft{Subject: "free"})

	claims := []struct {
		agent, want string
	}{
		{"alice", "3"}, // 1 is owned, 2 completed
		{"bob", "5"},   // 4 is blocked by 3, in progress
	}
	for _, c := range claims {
		got, err := l.Claim(ctx, c.agent)
		if err != nil {
			t.Fatalf("Claim(%q) error: %v", c.agent, err)
		}
		if got.ID != c.want || got.Owner != c.agent || got.Status != tasklist.StatusInProgress {
			t.Errorf("Claim(%q) = {ID %q, Owner %q, Status %q}; want {%q, %q, in_progress}", c.agent, got.ID, got.Owner, got.Status, c.want, c.agent)
		}
		stored, err := l.Get(ctx, c.want)
		if err != nil || stored.Owner != c.agent || stored.Status != tasklist.StatusInProgress {
			t.Errorf("Get(%s) after Claim(%q) = {Owner %q, Status %q}, %v; want {%q, in_progress}", c.want, c.agent, stored.Owner, stored.Status, err, c.agent)
		}
	}
	if _, err := l.Claim(ctx, "carol"); !errors.Is(err, tasklist.ErrNoneReady) {
		t.Errorf("Claim(carol) with 4 blocked error = %v; want ErrNoneReady", err)
	}
	update(t, l, "3", tasklist.Update{Status: status(tasklist.StatusCompleted)})
	if got, err := l.Claim(ctx, "carol"); err != nil || got.ID != "4" {
		t.Errorf("Claim(carol) after 3 completed = %q, %v; want \"4\", nil", got.ID, err)
	}
}

func testClaimNoneReady(t *testing.T, s tasklist.Store) {
	ctx := t.Context()
	l := tasklist.New(s, listName)
	if _, err := l.Claim(ctx, "alice"); !errors.Is(err, tasklist.ErrNoneReady) {
		t.Errorf("Claim on an empty list error = %v; want ErrNoneReady", err)
	}
	mk(t, l, tasklist.Draft{Subject: "done"})
	update(t, l, "1", tasklist.Update{Status: status(tasklist.StatusCompleted)})
	mk(t, l, tasklist.Draft{Subject: "taken", Owner: "bob"})
	if _, err := l.Claim(ctx, "alice"); !errors.Is(err, tasklist.ErrNoneReady) {
		t.Errorf("Claim with only completed and owned tasks error = %v; want ErrNoneReady", err)
	}
}

// testConcurrentClaim has Goroutines claimers drain ClaimTasks tasks.
func testConcurrentClaim(t *testing.T, s tasklist.Store) {
	ctx := t.Context()
	l := tasklist.New(s, listName)
	for i := range ClaimTasks {
		mk(t, l, tasklist.Draft{Subject: fmt.Sprint("task ", i+1)})
	}
	got := make([][]string, Goroutines)
	var wg sync.WaitGroup
	for g := range Goroutines {
		agent := fmt.Sprint("agent", g)
		wg.Go(func() {
			for {
				task, err := l.Claim(ctx, agent)
				if errors.Is(err, tasklist.ErrNoneReady) {
					return
				}
				if err != nil {
					t.Errorf("%s: Claim error: %v", agent, err)
					return
				}
				if task.Owner != agent {
					t.Errorf("%s: Claim returned task %s owned by %q", agent, task.ID, task.Owner)
				}
				got[g] = append(got[g], task.ID)
			}
		})
	}
	wg.Wait()
	claimedBy := map[string]string{}
	for g, ids := range got {
		agent := fmt.Sprint("agent", g)
		for _, id := range ids {
			if prev, dup := claimedBy[id]; dup {
				t.Errorf("task %s claimed by both %s and %s", id, prev, agent)
			}
			claimedBy[id] = agent
		}
	}
	if len(claimedBy) != ClaimTasks {
		t.Errorf("%d distinct tasks claimed; want %d", len(claimedBy), ClaimTasks)
	}
	tasks, err := l.Tasks(ctx)
	if err != nil {
		t.Fatalf("Tasks error: %v", err)
	}
	for _, task := range tasks {
		if task.Status != tasklist.StatusInProgress || task.Owner != claimedBy[task.ID] {
			t.Errorf("task %s = {Owner %q, Status %q}; want {%q, in_progress}", task.ID, task.Owner, task.Status, claimedBy[task.ID])
		}
	}
}

// testClaimTaskRace has Goroutines agents claim one task at once.
func testClaimTaskRace(t *testing.T, s tasklist.Store) {
	l := tasklist.New(s, listName)
	mk(t, l, tasklist.Draft{Subject: "prize"})
	errs := make([]error, Goroutines)
	var wg sync.WaitGroup
	for g := range Goroutines {
		wg.Go(func() {
			_, errs[g] = l.ClaimTask(t.Context(), "1", fmt.Sprint("agent", g))
		})
	}
	wg.Wait()
	var winners []string
	for g, err := range errs {
		if err == nil {
			winners = append(winners, fmt.Sprint("agent", g))
		}
	}
	if len(winners) != 1 {
		t.Fatalf("ClaimTask winners = %v; want exactly one", winners)
	}
	for g, err := range errs {
		if err == nil {
			continue
		}
		var ce *tasklist.ClaimedError
		if !errors.As(err, &ce) || ce.Owner != winners[0] || ce.ID != "1" {
			t.Errorf("agent%d: ClaimTask error = %v; want *ClaimedError{ID 1, Owner %s}", g, err, winners[0])
		}
	}
	got, err := l.Get(t.Context(), "1")
	if err != nil || got.Owner != winners[0] || got.Status != tasklist.StatusInProgress {
		t.Errorf("Get(1) = {Owner %q, Status %q}, %v; want {%q, in_progress}", got.Owner, got.Status, err, winners[0])
	}
}

func testClaimTaskErrors(t *testing.T, s tasklist.Store) {
	ctx := t.Context()
	l := tasklist.New(s, listName)
	mk(t, l, tasklist.Draft{Subject: "owned by bob", Owner: "bob"})
	mk(t, l, tasklist.Draft{Subject: "completed"})
	update(t, l, "2", tasklist.Update{Status: status(tasklist.StatusCompleted)})
	mk(t, l, tasklist.Draft{Subject: "blocker"})
	mk(t, l, tasklist.Draft{Subject: "blocked", BlockedBy: []string{"3"}})
	mk(t, l, tasklist.Draft{Subject: "mine", Owner: "alice"})

	sentinels := []error{tasklist.ErrNotFound, tasklist.ErrClaimed, tasklist.ErrCompleted, tasklist.ErrBlocked}
	tests := []struct {
		id   string
		want error // nil: success
	}{
		{"99", tasklist.ErrNotFound},
		{"1", tasklist.ErrClaimed},
		{"2", tasklist.ErrCompleted},
		{"4", tasklist.ErrBlocked},
		{"5", nil}, // alice's own task: claiming again succeeds
		{"3", nil},
	}
	for _, tt := range tests {
		got, err := l.ClaimTask(ctx, tt.id, "alice")
		if tt.want == nil {
			if err != nil || got.Owner != "alice" || got.Status != tasklist.StatusInProgress {
				t.Errorf("ClaimTask(%s, alice) = {Owner %q, Status %q}, %v; want {alice, in_progress}, nil", tt.id, got.Owner, got.Status, err)
			}
			continue
		}
		for _, sen := range sentinels {
			if is := errors.Is(err, sen); is != (sen == tt.want) {
				t.Errorf("ClaimTask(%s, alice) error = %v; errors.Is(err, %v) = %v; want %v", tt.id, err, sen, is, !is)
			}
		}
	}
	var ce *tasklist.ClaimedError
	if _, err := l.ClaimTask(ctx, "1", "alice"); !errors.As(err, &ce) || ce.Owner != "bob" {
		t.Errorf("ClaimTask(1, alice) error = %v; want *ClaimedError naming bob", err)
	}
	// 3 is now in progress, not completed: 4 stays blocked.
	var be *tasklist.BlockedError
	if _, err := l.ClaimTask(ctx, "4", "carol"); !errors.As(err, &be) || !slices.Equal(be.Blockers, []string{"3"}) {
		t.Errorf("ClaimTask(4, carol) error = %v; want *BlockedError listing 3", err)
	}
}

func testRelease(t *testing.T, s tasklist.Store) {
	ctx := t.Context()
	l := tasklist.New(s, listName)
	for _, n := range []string{"a1", "a2-done", "a3-pending-owned", "b1"} {
		mk(t, l, tasklist.Draft{Subject: n})
	}
	if _, err := l.ClaimTask(ctx, "1", "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ClaimTask(ctx, "2", "alice"); err != nil {
		t.Fatal(err)
	}
	update(t, l, "2", tasklist.Update{Status: status(tasklist.StatusCompleted)})
	update(t, l, "3", tasklist.Update{Owner: ptr("alice")})
	if _, err := l.ClaimTask(ctx, "4", "bob"); err != nil {
		t.Fatal(err)
	}

	released, err := l.Release(ctx, "alice")
	if err != nil {
		t.Fatalf("Release(alice) error: %v", err)
	}
	var ids []string
	for _, r := range released {
		ids = append(ids, r.ID)
	}
	if diff := cmp.Diff([]string{"1", "3"}, ids); diff != "" {
		t.Errorf("Release(alice) ids mismatch (-want +got):\n%s", diff)
	}
	tasks, err := l.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, task := range tasks {
		got = append(got, fmt.Sprintf("%s %s owner=%q", task.ID, task.Status, task.Owner))
	}
	want := []string{
		`1 pending owner=""`,
		`2 completed owner="alice"`,
		`3 pending owner=""`,
		`4 in_progress owner="bob"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tasks after Release(alice) mismatch (-want +got):\n%s", diff)
	}
	if again, err := l.Release(ctx, "alice"); err != nil || len(again) != 0 {
		t.Errorf("second Release(alice) = %d tasks, %v; want 0, nil", len(again), err)
	}
}

// lostAnswer is a store whose first Put is applied but answered with
// ErrConflict, as a store that retried a write whose answer it lost (NATS
// across a server restart) sees its own first attempt.
type lostAnswer struct {
	tasklist.Store
	mu   sync.Mutex
	done bool
}

func (s *lostAnswer) Put(ctx context.Context, list string, t tasklist.Task, prev tasklist.Revision) (tasklist.Revision, error) {
	rev, err := s.Store.Put(ctx, list, t, prev)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && !s.done {
		s.done = true
		return 0, fmt.Errorf("put %s: %w (the answer was lost, the write was not)", t.ID, tasklist.ErrConflict)
	}
	return rev, err
}

// A claim whose write was applied though the store answered ErrConflict
// is the claimer's: Claim returns that task, not another or none, so no
// task stands owned by an agent that does not know it.
func testClaimAnswerLost(t *testing.T, s tasklist.Store) {
	ctx := t.Context()
	mk(t, tasklist.New(s, listName), tasklist.Draft{Subject: "one"})
	mk(t, tasklist.New(s, listName), tasklist.Draft{Subject: "two"})
	l := tasklist.New(&lostAnswer{Store: s}, listName)
	got, err := l.Claim(ctx, "alice")
	if err != nil {
		t.Fatalf("Claim error: %v; want task 1, whose write was applied", err)
	}
	if got.ID != "1" || got.Owner != "alice" {
		t.Errorf("Claim = {ID %q, Owner %q}; want task 1 owned by alice", got.ID, got.Owner)
	}
	if two, err := l.Get(ctx, "2"); err != nil || two.Owner != "" {
		t.Errorf("task 2 = %+v, %v; want it untouched", two, err)
	}
}
