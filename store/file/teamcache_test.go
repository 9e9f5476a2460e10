package file_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/team"
)

// TestTeamCacheSeesOtherProcess: the team file is cached per store, and a
// member that another process adds is a valid recipient at once, on every
// one of several additions in quick succession (the file is rewritten
// within milliseconds each time, so its times alone cannot tell versions
// apart).
func TestTeamCacheSeesOtherProcess(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ftNewTeam(t, s, "crew")
	child := ftStartChild(t, ftChildSpec{Role: "team-add-each", Root: root, Name: "crew", Agent: "peer"})
	child.expect(t, "ready")
	ctx := t.Context()
	for i := range 15 {
		name := fmt.Sprintf("peer-%d", i)
		var unknown *mailbox.UnknownRecipientError
		if _, err := s.Mail().Send(ctx, "crew", name, mailbox.Message{From: team.LeadName, Text: "early"}); !errors.As(err, &unknown) {
			t.Fatalf("Send to %s before it joined: %v; want an UnknownRecipientError", name, err)
		}
		child.send(t, "go")
		child.expect(t, "added "+name)
		if _, err := s.Mail().Send(ctx, "crew", name, mailbox.Message{From: team.LeadName, Text: "welcome"}); err != nil {
			t.Fatalf("Send to %s just after another process added it: %v", name, err)
		}
		c, err := s.Teams().Get(ctx, "crew")
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Members) != i+2 {
			t.Fatalf("Get after adding %s: %d members (%v); want %d", name, len(c.Members), c.Names(), i+2)
		}
	}
}

// TestTeamCacheSameSizeRewrite: a writer that rewrites the team file in
// place with a same-sized change and sets its modification time back (as a
// copy tool might) is still seen by a store that cached the file.
func TestTeamCacheSameSizeRewrite(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ftNewTeam(t, s, "crew")
	ctx := t.Context()
	if _, err := team.AddMember(ctx, s.Teams(), "crew", team.Member{Name: "ann", Color: "blue"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.Root(), "teams", "crew", "config.json")
	colors := []string{"blue", "pink", "cyan"}
	for i := range 30 {
		from, to := colors[i%3], colors[(i+1)%3]
		c, err := s.Teams().Get(ctx, "crew")
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := c.Member("ann"); m.Color != from {
			t.Fatalf("round %d: ann's color = %q; want %q", i, m.Color, from)
		}
		ftRewriteSameSize(t, path, `"color": "`+from+`"`, `"color": "`+to+`"`)
	}
}

// TestSetActiveConcurrent: many members flipping their active flags at
// once (written together in a few updates) all end as asked, and a member
// not on the roster gets team.ErrNoMember without failing the others.
func TestSetActiveConcurrent(t *testing.T) {
	s := ftOpen(t, t.TempDir(), file.Options{})
	ftNewTeam(t, s, "crew")
	ctx := t.Context()
	const n = 60
	for i := range n {
		if _, err := team.AddMember(ctx, s.Teams(), "crew", team.Member{Name: fmt.Sprintf("m%d", i)}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := team.SetActive(ctx, s.Teams(), "crew", fmt.Sprintf("m%d", i), i%2 == 0); err != nil {
				t.Errorf("SetActive(m%d): %v", i, err)
			}
		})
	}
	wg.Go(func() {
		if err := team.SetActive(ctx, s.Teams(), "crew", "ghost", true); !errors.Is(err, team.ErrNoMember) {
			t.Errorf("SetActive(ghost) = %v; want team.ErrNoMember", err)
		}
	})
	wg.Wait()
	// Read by another store: what is on disk.
	c, err := ftOpen(t, s.Root(), file.Options{}).Teams().Get(ctx, "crew")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		m, ok := c.Member(fmt.Sprintf("m%d", i))
		if !ok || m.Active() != (i%2 == 0) {
			t.Errorf("m%d: Active() = %v; want %v", i, m.Active(), i%2 == 0)
		}
	}
}

// TestWatchesHoldNoGoroutine: a thousand idle teammates hold two watches
// each; a watch costs no goroutine, and ends with its ctx.
func TestWatchesHoldNoGoroutine(t *testing.T) {
	s := ftOpen(t, t.TempDir(), file.Options{})
	ftNewTeam(t, s, "crew")
	ctx, cancel := context.WithCancel(t.Context())
	base := runtime.NumGoroutine()
	var chans []<-chan struct{}
	for range 200 {
		ch, err := s.Mail().Watch(ctx, "crew", team.LeadName)
		if err != nil {
			t.Fatal(err)
		}
		chans = append(chans, ch)
	}
	if n := runtime.NumGoroutine() - base; n > 20 {
		t.Errorf("200 watches added %d goroutines; want none per watch", n)
	}
	cancel()
	for i, ch := range chans {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("watch %d still open 10 s after its ctx ended", i)
		}
		for range ch {
		}
	}
}

// TestEditCanceledDropped: an edit whose ctx has ended is not written and
// gives the ctx's error; the store's next edit is written as usual.
func TestEditCanceledDropped(t *testing.T) {
	s, err := file.Open(t.TempDir(), file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	if _, err := team.Create(ctx, s.Teams(), team.CreateOptions{Name: "crew", Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := team.AddMember(done, s.Teams(), "crew", team.Member{Name: "gone"}, time.Now()); !errors.Is(err, context.Canceled) {
		t.Fatalf("AddMember with an ended ctx = %v; want context.Canceled", err)
	}
	if _, err := team.AddMember(ctx, s.Teams(), "crew", team.Member{Name: "kept"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	c, err := s.Teams().Get(ctx, "crew")
	if err != nil {
		t.Fatal(err)
	}
	if names := c.Names(); len(names) != 2 || names[1] != "kept" {
		t.Errorf("roster = %v; want [team-lead kept]", names)
	}
}
