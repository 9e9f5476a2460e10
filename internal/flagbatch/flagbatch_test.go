package flagbatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/store/mem"
	"github.com/troupe-dev/troupe/team"
)

// TestSetActiveBatches: flips asked for together are written in fewer
// updates than flips, each ends as asked, and a member not on the roster
// gets team.ErrNoMember without failing the others.
func TestSetActiveBatches(t *testing.T) {
	st := mem.New(mem.Options{})
	defer st.Close()
	ctx := t.Context()
	if _, err := team.Create(ctx, st.Teams(), team.CreateOptions{Name: "crew", Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	const n = 100
	for i := range n {
		if _, err := team.AddMember(ctx, st.Teams(), "crew", team.Member{Name: fmt.Sprintf("m%d", i)}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	var updates atomic.Int64
	update := func(ctx context.Context, name string, fn func(*team.Config) error) (team.Config, error) {
		updates.Add(1)
		time.Sleep(time.Millisecond) // a write takes a while: others queue behind it
		return st.Teams().Update(ctx, name, fn)
	}
	var bs Batches
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := bs.SetActive(ctx, update, "crew", fmt.Sprintf("m%d", i), i%3 == 0); err != nil {
				t.Errorf("SetActive(m%d): %v", i, err)
			}
		})
	}
	wg.Go(func() {
		if err := bs.SetActive(ctx, update, "crew", "ghost", false); !errors.Is(err, team.ErrNoMember) {
			t.Errorf("SetActive(ghost) = %v; want team.ErrNoMember", err)
		}
	})
	wg.Wait()
	if u := updates.Load(); u >= n {
		t.Errorf("%d updates for %d flips; want them written together", u, n+1)
	}
	t.Logf("%d updates for %d flips", updates.Load(), n+1)
	c, err := st.Teams().Get(ctx, "crew")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if m, _ := c.Member(fmt.Sprintf("m%d", i)); m.Active() != (i%3 == 0) {
			t.Errorf("m%d: Active() = %v; want %v", i, m.Active(), i%3 == 0)
		}
	}
	// Nothing to change: no write.
	before := updates.Load()
	if err := bs.SetActive(ctx, update, "crew", "m0", true); err != nil {
		t.Fatal(err)
	}
	if got := updates.Load() - before; got != 1 {
		t.Errorf("a flip already in place: %d update calls; want 1 (which writes nothing)", got)
	}
}

// TestSetActiveRetriedUpdate: a store that runs the update's function
// again on a newer copy of the team (a stale replica read on a NATS
// cluster) reports what the last run found: a member missing from the
// stale copy but present in the newer one is marked, without an error.
func TestSetActiveRetriedUpdate(t *testing.T) {
	st := mem.New(mem.Options{})
	defer st.Close()
	ctx := t.Context()
	if _, err := team.Create(ctx, st.Teams(), team.CreateOptions{Name: "crew", Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	stale, err := st.Teams().Get(ctx, "crew")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := team.AddMember(ctx, st.Teams(), "crew", team.Member{Name: "late"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	update := func(ctx context.Context, name string, fn func(*team.Config) error) (team.Config, error) {
		old := stale.Clone()
		_ = fn(&old) // the first run saw a copy from before "late" joined
		return st.Teams().Update(ctx, name, fn)
	}
	var bs Batches
	if err := bs.SetActive(ctx, update, "crew", "late", false); err != nil {
		t.Fatalf("SetActive(late) = %v; want nil (the last run found the member)", err)
	}
	c, err := st.Teams().Get(ctx, "crew")
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := c.Member("late"); !ok || m.Active() {
		t.Fatalf("late = %+v, %v; want on the roster and idle", m, ok)
	}
}
