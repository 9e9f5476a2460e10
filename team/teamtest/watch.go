package teamtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/team"
)

// testWatch checks a store that implements team.Watcher: watching a
// missing team is ErrNotFound; a member added, a member going idle and
// the team's delete each kick a watcher; the channel closes when its
// context ends. Stores without Watch skip it.
func testWatch(t *testing.T, s stores) {
	w, ok := s.teams.(team.Watcher)
	if !ok {
		t.Skip("the store does not implement team.Watcher")
	}
	if _, err := w.Watch(t.Context(), "nosuch"); !errors.Is(err, team.ErrNotFound) {
		t.Fatalf("Watch of a missing team: %v, want ErrNotFound", err)
	}
	create(t, s, "watched")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kick, err := w.Watch(ctx, "watched")
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	drain := func() {
		for {
			select {
			case <-kick:
			case <-time.After(50 * time.Millisecond):
				return
			}
		}
	}
	wait := func(what string) {
		t.Helper()
		select {
		case _, open := <-kick:
			if !open {
				t.Fatalf("after %s: the watch channel closed", what)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("after %s: no kick within 10 s", what)
		}
	}
	add(t, s, "watched", "alice")
	wait("a member added")
	drain()
	if err := team.SetActive(t.Context(), s.teams, "watched", "alice", false); err != nil {
		t.Fatalf("SetActive: %v", err)
	}
	wait("a member gone idle")
	drain()
	if err := team.Delete(t.Context(), s.teams, "watched"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	wait("the team deleted")
	cancel()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, open := <-kick:
			if !open {
				return
			}
		case <-deadline:
			t.Fatal("the watch channel stayed open 10 s after its context ended")
		}
	}
}
