package teamtest

import (
	"context"
	"errors"
	"testing"

	"github.com/troupe-dev/troupe/internal/kick/kicktest"
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
	drain := func() { kicktest.Drain(kick) }
	wait := func(what string) {
		t.Helper()
		kicktest.Wait(t, kick, what)
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
	kicktest.Closes(t, kick)
}
