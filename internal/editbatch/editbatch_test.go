package editbatch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/store/mem"
	"github.com/troupe-dev/troupe/team"
)

// TestFlipsBatched: flips asked for together are written in fewer
// updates than flips, each ends as asked, and a member not on the roster
// gets team.ErrNoMember without failing the others.
func TestFlipsBatched(t *testing.T) {
	const n = 100
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("m%d", i))
	}
	st, ctx := crew(t, names...)
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
			if _, err := bs.Edit(ctx, update, "crew", team.ActiveEdit(fmt.Sprintf("m%d", i), i%3 == 0)); err != nil {
				t.Errorf("SetActive(m%d): %v", i, err)
			}
		})
	}
	wg.Go(func() {
		if _, err := bs.Edit(ctx, update, "crew", team.ActiveEdit("ghost", false)); !errors.Is(err, team.ErrNoMember) {
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
	if _, err := bs.Edit(ctx, update, "crew", team.ActiveEdit("m0", true)); err != nil {
		t.Fatal(err)
	}
	if got := updates.Load() - before; got != 1 {
		t.Errorf("a flip already in place: %d update calls; want 1 (which writes nothing)", got)
	}
}

// TestRetriedUpdate: a store that runs the update's function
// again on a newer copy of the team (a stale replica read on a NATS
// cluster) reports what the last run found: a member missing from the
// stale copy but present in the newer one is marked, without an error.
func TestRetriedUpdate(t *testing.T) {
	st, ctx := crew(t)
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
	if _, err := bs.Edit(ctx, update, "crew", team.ActiveEdit("late", false)); err != nil {
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

// TestAddCarriesFlips: an add asked for while a write is under way goes
// into the next write with the flips asked for meanwhile; each caller gets
// its member as stored, and a clashing add fails alone.
func TestAddCarriesFlips(t *testing.T) {
	st, ctx := crew(t, "amy", "bo")
	var bs Batches
	var wg sync.WaitGroup
	update, updates, hold := holdWrite(t, ctx, st, &bs, &wg)
	add, err := team.AddEdit(team.Member{Name: "cy"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	clash, err := team.AddEdit(team.Member{Name: "AMY"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var added team.Member
	wg.Go(func() {
		var err error
		if added, err = bs.Edit(ctx, update, "crew", add); err != nil {
			t.Errorf("add cy: %v", err)
		}
	})
	wg.Go(func() {
		if _, err := bs.Edit(ctx, update, "crew", team.ActiveEdit("bo", false)); err != nil {
			t.Errorf("flip bo: %v", err)
		}
	})
	wg.Go(func() {
		if _, err := bs.Edit(ctx, update, "crew", clash); !errors.Is(err, team.ErrMemberExists) {
			t.Errorf("add AMY = %v; want team.ErrMemberExists", err)
		}
	})
	waitPending(t, &bs, "crew", 3)
	close(hold)
	wg.Wait()
	if u := updates.Load(); u != 2 {
		t.Errorf("%d updates; want 2 (the held one, then the add with the flips and the clash)", u)
	}
	if added.Name != "cy" || added.AgentID != "cy@crew" || added.Color == "" {
		t.Errorf("add returned %+v; want cy as stored, with its agent id and color", added)
	}
	c, err := st.Teams().Get(ctx, "crew")
	if err != nil {
		t.Fatal(err)
	}
	amy, _ := c.Member("amy")
	bo, _ := c.Member("bo")
	if _, ok := c.Member("cy"); !ok || amy.Active() || bo.Active() || len(c.Members) != 4 {
		t.Errorf("roster %+v; want amy and bo idle, cy added, no AMY", c.Members)
	}
}

// TestEditDroppedWithItsContext: an edit whose ctx ends before a write
// takes it is dropped: its caller gets ctx's error and the roster never
// has it.
func TestEditDroppedWithItsContext(t *testing.T) {
	st, ctx := crew(t, "amy")
	var bs Batches
	var wg sync.WaitGroup
	update, _, hold := holdWrite(t, ctx, st, &bs, &wg)
	add, err := team.AddEdit(team.Member{Name: "gone"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := bs.Edit(short, update, "crew", add)
		errc <- err
	}()
	waitPending(t, &bs, "crew", 1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "may still be stored") {
		t.Errorf("Edit with its ctx ended while queued = %v; want context.Canceled, dropped", err)
	}
	close(hold)
	wg.Wait()
	c, err := st.Teams().Get(ctx, "crew")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Member("gone"); ok {
		t.Error("the dropped add is on the roster")
	}
}

// crew returns a store in memory with team crew of the members named.
func crew(t *testing.T, members ...string) (*mem.Store, context.Context) {
	t.Helper()
	st := mem.New(mem.Options{})
	t.Cleanup(func() { st.Close() })
	ctx := t.Context()
	if _, err := team.Create(ctx, st.Teams(), team.CreateOptions{Name: "crew", Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	for _, name := range members {
		if _, err := team.AddMember(ctx, st.Teams(), "crew", team.Member{Name: name}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return st, ctx
}

// holdWrite starts, in wg, a write of bs that marks amy idle and holds it
// until hold is closed, so that the edits asked for meanwhile queue behind
// it. It returns st's update that the edits must use, counted in updates.
func holdWrite(t *testing.T, ctx context.Context, st *mem.Store, bs *Batches, wg *sync.WaitGroup) (update Update, updates *atomic.Int64, hold chan struct{}) {
	updates = new(atomic.Int64)
	held := make(chan struct{})
	hold = make(chan struct{})
	update = func(ctx context.Context, name string, fn func(*team.Config) error) (team.Config, error) {
		if updates.Add(1) == 1 {
			close(held)
			<-hold
		}
		return st.Teams().Update(ctx, name, fn)
	}
	wg.Go(func() {
		if _, err := bs.Edit(ctx, update, "crew", team.ActiveEdit("amy", false)); err != nil {
			t.Errorf("flip amy: %v", err)
		}
	})
	<-held
	return update, updates, hold
}

// waitPending waits until n edits of team name are queued.
func waitPending(t *testing.T, bs *Batches, name string, n int) {
	t.Helper()
	b := bs.batch(name)
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.mu.Lock()
		got := len(b.pending)
		b.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d edits queued after 10 s; want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}
