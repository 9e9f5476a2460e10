package file

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

// TestInboxOpsSkipRoster: after another process changed the team file
// (a teammate's flag flip on another host), reading an inbox, marking it
// read and watching it do not read the team file again: the store's
// snapshot stays the one it had. Send does (it checks the recipient).
func TestInboxOpsSkipRoster(t *testing.T) {
	s := mbOpen(t, Options{}, "alice", "bob")
	ctx := t.Context()
	other, err := Open(s.root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	d, err := s.Mail().Send(ctx, "crew", "alice", mailbox.Message{From: "bob", Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	path := s.Teams().configPath("crew")
	want := false
	for _, op := range []struct {
		name string
		do   func() error
	}{
		{"Read", func() error { _, err := s.Mail().Read(ctx, "crew", "alice", true); return err }},
		{"MarkRead", func() error { _, err := s.Mail().MarkRead(ctx, "crew", "alice", []string{d[0].ID}); return err }},
		{"Watch", func() error {
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			_, err := s.Mail().Watch(wctx, "crew", "alice")
			return err
		}},
	} {
		c, err := other.Teams().Get(ctx, "crew")
		if err != nil {
			t.Fatal(err)
		}
		bob, _ := c.Member("bob")
		if err := team.SetActive(ctx, other.Teams(), "crew", "bob", !bob.Active()); err != nil {
			t.Fatal(err)
		}
		want = !bob.Active()
		before := s.teamCache.get(path)
		if err := op.do(); err != nil {
			t.Fatalf("%s: %v", op.name, err)
		}
		if s.teamCache.get(path) != before {
			t.Errorf("%s read the team file again after another process changed it; want a stat only", op.name)
		}
	}
	before := s.teamCache.get(path)
	if _, err := s.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	snap := s.teamCache.get(path)
	if snap == before {
		t.Error("Send did not read the changed team file; want its recipient checked against the roster now")
	}
	cfg := snap.config()
	if m, ok := cfg.Member("bob"); !ok || m.Active() != want {
		t.Errorf("after Send: bob active %v in the store's snapshot; want %v (the other process's last change)", m.Active(), want)
	}
}

// TestInboxOpsDeletedTeam: once the team file is gone, the inbox
// operations report mailbox.ErrNoTeam, whatever snapshot the store had.
func TestInboxOpsDeletedTeam(t *testing.T) {
	s := mbOpen(t, Options{}, "alice")
	ctx := t.Context()
	if _, err := s.Mail().Read(ctx, "crew", "alice", true); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(s.teamDir("crew"), teamFileName)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Mail().Read(ctx, "crew", "alice", true); !errors.Is(err, mailbox.ErrNoTeam) {
		t.Errorf("Read: %v; want mailbox.ErrNoTeam", err)
	}
	if _, err := s.Mail().MarkRead(ctx, "crew", "alice", []string{"x"}); !errors.Is(err, mailbox.ErrNoTeam) {
		t.Errorf("MarkRead: %v; want mailbox.ErrNoTeam", err)
	}
	if _, err := s.Mail().Watch(ctx, "crew", "alice"); !errors.Is(err, mailbox.ErrNoTeam) {
		t.Errorf("Watch: %v; want mailbox.ErrNoTeam", err)
	}
}

// BenchmarkInboxReadTeamChurn: a Read of a teammate's inbox in a team of
// 1,000 whose file another process changes before each read (a flag
// flipped on another host), as a host of a large team reads its
// teammates' inboxes while the others work. Only the reads are timed.
//
//	go test -run '^$' -bench BenchmarkInboxReadTeamChurn -benchmem ./store/file/
func BenchmarkInboxReadTeamChurn(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := b.Context()
	if _, err := team.Create(ctx, s.Teams(), team.CreateOptions{Name: "crew", Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Teams().Update(ctx, "crew", func(c *team.Config) error {
		for i := range 1000 {
			c.Members = append(c.Members, team.Member{Name: fmt.Sprintf("m%04d", i), AgentID: fmt.Sprintf("m%04d@crew", i)})
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	other, err := Open(s.root, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer other.Close()
	if _, err := s.Mail().Send(ctx, "crew", "m0001", mailbox.Message{From: "m0002", Text: "hi"}); err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		if err := team.SetActive(ctx, other.Teams(), "crew", "m0003", i%2 == 0); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := s.Mail().Read(ctx, "crew", "m0001", true); err != nil {
			b.Fatal(err)
		}
	}
}
