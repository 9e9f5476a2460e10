package mem_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/mailbox/mailboxtest"
	"github.com/troupe-dev/troupe/store/mem"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/tasklist/tasklisttest"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/team/teamtest"
)

func TestTeamConformance(t *testing.T) {
	teamtest.Run(t, func(t *testing.T) (team.Store, mailbox.Store, tasklist.Store) {
		s := mem.New(mem.Options{})
		t.Cleanup(func() { s.Close() })
		return s.Teams(), s.Mail(), s.Tasks()
	})
}

func TestMailboxConformance(t *testing.T) {
	mailboxtest.Run(t, func(t *testing.T) (team.Store, mailbox.Store) {
		s := mem.New(mem.Options{KeepRead: mailboxtest.KeepRead})
		t.Cleanup(func() { s.Close() })
		return s.Teams(), s.Mail()
	})
}

func TestTasklistConformance(t *testing.T) {
	tasklisttest.Run(t, func(t *testing.T) tasklist.Store {
		s := mem.New(mem.Options{})
		t.Cleanup(func() { s.Close() })
		return s.Tasks()
	})
}

var now = time.Date(2026, 12, 2, 13, 13, 36, 880_000_000, time.UTC)

// newTeam returns a store holding team "crew" with members alice and bob.
func newTeam(t *testing.T, opts mem.Options) *mem.Store {
	t.Helper()
	s := mem.New(opts)
	t.Cleanup(func() { s.Close() })
	if _, err := team.Create(t.Context(), s.Teams(), team.CreateOptions{Name: "crew", Now: now, Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"alice", "bob"} {
		if _, err := team.AddMember(t.Context(), s.Teams(), "crew", team.Member{Name: n}, now); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestClose(t *testing.T) {
	ctx := t.Context()
	s := newTeam(t, mem.Options{})
	kicks, err := s.Mail().Watch(ctx, "crew", "alice")
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := s.Tasks().Lock(ctx, "crew")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	waiting := make(chan error, 1)
	go func() {
		_, err := s.Tasks().Lock(ctx, "crew")
		waiting <- err
	}()

	for i := range 2 {
		if err := s.Close(); err != nil {
			t.Errorf("Close #%d = %v; want nil", i+1, err)
		}
	}
	select {
	case _, ok := <-kicks:
		if ok {
			if _, ok := <-kicks; ok {
				t.Error("Watch channel still open after Close")
			}
		}
	case <-time.After(5 * time.Second):
		t.Error("Watch channel still open 5s after Close")
	}
	select {
	case err := <-waiting:
		if !errors.Is(err, tasklist.ErrClosed) {
			t.Errorf("Lock waiting during Close error = %v; want tasklist.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("Lock still waiting 5s after Close")
	}

	tests := []struct {
		name string
		err  error
		want error
	}{
		{"Teams.Create", s.Teams().Create(ctx, team.Config{Name: "new"}), team.ErrClosed},
		{"Teams.Get", second(s.Teams().Get(ctx, "crew")), team.ErrClosed},
		{"Teams.List", second(s.Teams().List(ctx)), team.ErrClosed},
		{"Teams.Update", second(s.Teams().Update(ctx, "crew", func(*team.Config) error { return nil })), team.ErrClosed},
		{"Teams.Delete", s.Teams().Delete(ctx, "crew", nil), team.ErrClosed},
		{"Mail.Send", second(s.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: "x"})), mailbox.ErrClosed},
		{"Mail.Read", second(s.Mail().Read(ctx, "crew", "bob", false)), mailbox.ErrClosed},
		{"Mail.MarkRead", second(s.Mail().MarkRead(ctx, "crew", "bob", []string{"x"})), mailbox.ErrClosed},
		{"Mail.Watch", second(s.Mail().Watch(ctx, "crew", "bob")), mailbox.ErrClosed},
		{"Tasks.Create", third(s.Tasks().Create(ctx, "crew", tasklist.Task{Subject: "x"})), tasklist.ErrClosed},
		{"Tasks.Get", third(s.Tasks().Get(ctx, "crew", "1")), tasklist.ErrClosed},
		{"Tasks.List", second(s.Tasks().List(ctx, "crew")), tasklist.ErrClosed},
		{"Tasks.Put", second(s.Tasks().Put(ctx, "crew", tasklist.Task{ID: "1", Status: tasklist.StatusPending}, 1)), tasklist.ErrClosed},
		{"Tasks.Delete", s.Tasks().Delete(ctx, "crew", "1", 1), tasklist.ErrClosed},
		{"Tasks.Lock", second(s.Tasks().Lock(ctx, "other")), tasklist.ErrClosed},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s after Close error = %v; want %v", tt.name, tt.err, tt.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func third[T, U any](_ T, _ U, err error) error { return err }

// TestWatchNoLeak checks, inside a synctest bubble (which fails if any
// goroutine outlives it), that a Watch ends with its ctx.
func TestWatchNoLeak(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTeam(t, mem.Options{})
		ctx, cancel := context.WithCancel(t.Context())
		kicks, err := s.Mail().Watch(ctx, "crew", "bob")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: "a"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: "b"}); err != nil {
			t.Fatal(err)
		}
		if _, ok := <-kicks; !ok {
			t.Fatal("Watch channel closed; want a kick")
		}
		select {
		case <-kicks:
			t.Error("two sends gave two kicks; want them coalesced into one")
		default:
		}
		cancel()
		synctest.Wait()
		if _, ok := <-kicks; ok {
			t.Error("Watch channel open after ctx was canceled")
		}
	})
}

func TestKeepRead(t *testing.T) {
	tests := []struct {
		keepRead int
		want     int // read messages left after 120 read ones and a write
	}{
		{0, mem.DefaultKeepRead},
		{-1, 0},
		{3, 3},
	}
	for _, tt := range tests {
		ctx := t.Context()
		s := newTeam(t, mem.Options{KeepRead: tt.keepRead})
		var ids []string
		for range 120 {
			d, err := s.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: "x"})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, d[0].ID)
		}
		if _, err := s.Mail().MarkRead(ctx, "crew", "bob", ids); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: "unread"}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Mail().Read(ctx, "crew", "bob", false)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != tt.want+1 {
			t.Errorf("KeepRead %d: inbox holds %d messages; want %d read + 1 unread", tt.keepRead, len(got), tt.want)
		}
	}
}

func TestNowStampsMessages(t *testing.T) {
	clock := time.Date(2030, 1, 2, 3, 4, 5, 678_901_234, time.UTC)
	s := newTeam(t, mem.Options{Now: func() time.Time { return clock }})
	if _, err := s.Mail().Send(t.Context(), "crew", "bob", mailbox.Message{From: "alice", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Mail().Read(t.Context(), "crew", "bob", false)
	if err != nil {
		t.Fatal(err)
	}
	if want := clock.Truncate(time.Millisecond); !got[0].Timestamp.Equal(want) {
		t.Errorf("Timestamp = %v; want %v (Options.Now, to the millisecond)", got[0].Timestamp, want)
	}
}

func TestTeamsRefuse(t *testing.T) {
	ctx := t.Context()
	s := newTeam(t, mem.Options{})
	tests := []struct {
		name string
		err  error
	}{
		{"Create non-canonical", s.Teams().Create(ctx, team.Config{Name: "Crew Two"})},
		{"Create escaping", s.Teams().Create(ctx, team.Config{Name: "../x"})},
		{"Update renaming", second(s.Teams().Update(ctx, "crew", func(c *team.Config) error { c.Name = "other"; return nil }))},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Errorf("%s succeeded; want an error", tt.name)
		}
	}
	if _, err := s.Teams().Get(ctx, "other"); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("Get(other) after a refused rename error = %v; want ErrNotFound", err)
	}
}

func TestLockHonoursCanceledCtx(t *testing.T) {
	s := mem.New(mem.Options{})
	defer s.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for range 20 { // select would pick a ready case at random
		if unlock, err := s.Tasks().Lock(ctx, "l"); err == nil {
			unlock()
			t.Fatal("Lock with a canceled ctx succeeded; want ctx's error")
		}
	}
}

// TestCloneCoversAllFields fails when team.Config or team.Member gains a
// field, as a reminder to deep-copy it in cloneConfig (teams.go).
func TestCloneCoversAllFields(t *testing.T) {
	tests := []struct {
		typ  reflect.Type
		want int
	}{
		{reflect.TypeFor[team.Config](), 9},
		{reflect.TypeFor[team.Member](), 15},
	}
	for _, tt := range tests {
		if got := tt.typ.NumField(); got != tt.want {
			t.Errorf("%v has %d fields; want %d: update cloneConfig/cloneMember for the new ones, then this count", tt.typ, got, tt.want)
		}
	}
}
