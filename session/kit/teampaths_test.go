package kit

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/store/mem"
	"github.com/troupe-dev/troupe/team"
)

// A pane teammate picks up the team's new path rules from the team file as
// the lead writes them, each once, and stops following when it ends.
func TestFollowTeamPaths(t *testing.T) {
	s := mem.New(mem.Options{})
	defer s.Close()
	ctx := context.Background()
	if _, err := team.Create(ctx, s.Teams(), team.CreateOptions{Name: "crew", Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	added := make(chan struct{}, 8)
	fctx, stop := context.WithCancel(ctx)
	followTeamPaths(fctx, s.Teams(), "crew", func(r []string) {
		mu.Lock()
		got = append(got, r...)
		mu.Unlock()
		added <- struct{}{}
	})
	add := func(path string) {
		t.Helper()
		if _, err := s.Teams().Update(ctx, "crew", func(c *team.Config) error {
			c.TeamAllowedPaths = append(c.TeamAllowedPaths, team.AllowedPath{Path: path, ToolName: "Edit"})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-added:
		case <-time.After(10 * time.Second):
			t.Fatalf("the rule for %s was not followed", path)
		}
	}
	add("/work/a")
	add("/work/b")
	mu.Lock()
	if want := []string{"Edit(//work/a/**)", "Edit(//work/b/**)"}; !slices.Equal(got, want) {
		t.Errorf("rules followed = %v; want %v (each once)", got, want)
	}
	mu.Unlock()
	stop()
}
