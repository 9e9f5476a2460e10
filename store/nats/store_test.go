package nats_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/troupe-dev/troupe/mailbox"
	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// freePort returns a loopback port nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestOpenErrors(t *testing.T) {
	srv := startServer(t, "s3cret")
	raw := rawJS(t, srv)
	ctx := t.Context()
	if _, err := raw.CreateStream(ctx, jetstream.StreamConfig{Name: "bad_v1_mail", Subjects: []string{"elsewhere.>"}, Metadata: map[string]string{"troupe_schema": "1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "foreign_v1_teams"}); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "future_v1_teams", Metadata: map[string]string{"troupe_schema": "2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "expiring_v1_teams", TTL: time.Hour, Metadata: map[string]string{"troupe_schema": "1"}}); err != nil {
		t.Fatal(err)
	}
	unreachable := "nats://" + freePort(t)
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		url  string
		opts natsstore.Options
		want []string // substrings of the error
	}{
		{"unreachable", unreachable, natsstore.Options{ConnectTimeout: 2 * time.Second}, []string{unreachable}},
		{"wrong token", srv.url(), natsstore.Options{Token: "wrong"}, []string{srv.url(), "uthorization"}},
		{"no token", srv.url(), natsstore.Options{Token: ""}, []string{srv.url(), "uthorization"}},
		{"password redacted", "nats://joe:hunter2@" + freePort(t), natsstore.Options{ConnectTimeout: time.Second}, []string{"REDACTED"}},
		{"empty url", "", natsstore.Options{}, []string{"empty server URL"}},
		{"bad namespace", srv.url(), natsstore.Options{Token: "s3cret", Namespace: "Bad.NS"}, []string{`namespace "Bad.NS"`}},
		{"stream with other subjects", srv.url(), natsstore.Options{Token: "s3cret", Namespace: "bad"}, []string{"stream bad_v1_mail", "elsewhere.>"}},
		{"bucket not made by troupe", srv.url(), natsstore.Options{Token: "s3cret", Namespace: "foreign"}, []string{"bucket foreign_v1_teams", "troupe_schema"}},
		{"bucket of another schema", srv.url(), natsstore.Options{Token: "s3cret", Namespace: "future"}, []string{"bucket future_v1_teams", `schema version "2"`}},
		{"bucket that expires entries", srv.url(), natsstore.Options{Token: "s3cret", Namespace: "expiring"}, []string{"bucket expiring_v1_teams", "max age"}},
		{"missing creds file", srv.url(), natsstore.Options{CredsFile: "/no/such/file.creds"}, []string{"/no/such/file.creds"}},
		{"cert without key", srv.url(), natsstore.Options{TLSCertFile: "c.pem"}, []string{"both its certificate and its key"}},
		{"CA file not PEM", srv.url(), natsstore.Options{Token: "s3cret", TLSCAFile: notPEM}, []string{srv.url(), "certificate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := natsstore.Open(t.Context(), tt.url, tt.opts)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) succeeded; want an error mentioning %q", tt.url, tt.want)
			}
			t.Logf("Open error: %v", err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Open(%q) error = %q; want it to mention %q", tt.url, err, w)
				}
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("Open error %q shows the password", err)
			}
		})
	}
	// The right token works, and a second Open binds the same streams.
	for range 2 {
		s := srv.open(t, natsstore.Options{Namespace: "good", Token: "s3cret"})
		if _, err := s.Teams().List(ctx); err != nil {
			t.Fatalf("List on a good store: %v", err)
		}
	}
}

// rawJS returns a plain JetStream client of srv.
func rawJS(t *testing.T, srv *testServer) jetstream.JetStream {
	t.Helper()
	nc, err := natsgo.Connect(srv.url(), natsgo.Token(srv.token))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func TestClose(t *testing.T) {
	srv := startServer(t, "")
	s := srv.open(t, natsstore.Options{})
	newCrew(t, s)
	ctx := t.Context()
	kicks, err := s.Mail().Watch(ctx, "crew", "alice")
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := s.Tasks().Lock(ctx, "crew")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	for i := range 2 {
		if err := s.Close(); err != nil {
			t.Errorf("Close #%d = %v; want nil", i+1, err)
		}
	}
	select {
	case _, ok := <-kicks:
		for ok {
			_, ok = <-kicks
		}
	case <-time.After(10 * time.Second):
		t.Error("Watch channel still open 10s after Close")
	}
	second := func(_ any, err error) error { return err }
	third := func(_, _ any, err error) error { return err }
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

// TestStaleLockTakenOver: a holder that stops refreshing (its store closed
// without unlocking, as if its process died) loses the lock after
// LockStale.
func TestStaleLockTakenOver(t *testing.T) {
	srv := startServer(t, "")
	opts := natsstore.Options{Namespace: "stale", LockStale: 300 * time.Millisecond}
	dead := srv.open(t, opts)
	if _, err := dead.Tasks().Lock(t.Context(), "crew"); err != nil {
		t.Fatal(err)
	}
	dead.Close()
	live := srv.open(t, opts)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	unlock, err := live.Tasks().Lock(ctx, "crew")
	if err != nil {
		t.Fatalf("Lock after the holder died error: %v; want the stale lock taken over", err)
	}
	unlock()
	// A lock held by a live store is refreshed and not taken over.
	unlock, err = live.Tasks().Lock(ctx, "crew")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	other := srv.open(t, opts)
	short, cancel2 := context.WithTimeout(ctx, 5*opts.LockStale)
	defer cancel2()
	if u, err := other.Tasks().Lock(short, "crew"); err == nil {
		u()
		t.Fatal("Lock of a refreshed lock succeeded; want it held until unlock")
	}
}

// TestSendSameIDStoredOnce: a send retried with the same message id (as
// Send does after a lost acknowledgement) is stored once.
func TestSendSameIDStoredOnce(t *testing.T) {
	srv := startServer(t, "")
	s := srv.open(t, natsstore.Options{})
	newCrew(t, s)
	ctx := t.Context()
	msg := mailbox.Message{ID: "0c8f6a8e-7d2c-4a51-9a0e-1f2a3b4c5d6e", From: "alice", Text: "once"}
	for range 3 {
		d, err := s.Mail().Send(ctx, "crew", "bob", msg)
		if err != nil || len(d) != 1 || d[0].ID != msg.ID {
			t.Fatalf("Send = %+v, %v; want one delivery with id %s", d, err, msg.ID)
		}
	}
	got, err := s.Mail().Read(ctx, "crew", "bob", false)
	if err != nil || len(got) != 1 {
		t.Fatalf("Read(bob) = %d messages, %v; want 1", len(got), err)
	}
}

// TestOddNames: names that are not valid subject tokens (dots, spaces,
// wildcards) are encoded, and never reach another inbox.
func TestOddNames(t *testing.T) {
	srv := startServer(t, "")
	s := srv.open(t, natsstore.Options{})
	newCrew(t, s)
	ctx := t.Context()
	if _, err := s.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: "for bob"}); err != nil {
		t.Fatal(err)
	}
	for _, agent := range []string{"bob.x", "*", ">", "b o b", "=Qm9i", "", "bob\x00"} {
		got, err := s.Mail().Read(ctx, "crew", agent, false)
		if err != nil || len(got) != 0 {
			t.Errorf("Read(crew, %q) = %d messages, %v; want 0, nil", agent, len(got), err)
		}
		if n, err := s.Mail().MarkRead(ctx, "crew", agent, []string{"x.y", "*"}); err != nil || n != 0 {
			t.Errorf("MarkRead(crew, %q) = %d, %v; want 0, nil", agent, n, err)
		}
	}
	for _, list := range []string{"a.b", "*", "a b", "ü"} {
		tk, _, err := s.Tasks().Create(ctx, list, tasklist.Task{Subject: list})
		if err != nil {
			t.Fatalf("Create in list %q error: %v", list, err)
		}
		got, err := s.Tasks().List(ctx, list)
		if err != nil || len(got) != 1 || got[0].Task.Subject != list || tk.ID != "1" {
			t.Errorf("List(%q) = %+v, %v; want its one task", list, got, err)
		}
	}
	if _, _, err := s.Tasks().Get(ctx, "a.b", "1.2"); !errors.Is(err, tasklist.ErrNotFound) {
		t.Errorf("Get(a.b, 1.2) error = %v; want ErrNotFound", err)
	}
}

// TestCorruptEntryMovedAside: an entry another client published on an
// inbox subject that is not a message is moved aside and reported once.
func TestCorruptEntryMovedAside(t *testing.T) {
	srv := startServer(t, "")
	s := srv.open(t, natsstore.Options{Namespace: "corrupt"})
	newCrew(t, s)
	ctx := t.Context()
	if _, err := s.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: "good"}); err != nil {
		t.Fatal(err)
	}
	if _, err := rawJS(t, srv).Publish(ctx, "corrupt.v1.mail.crew.bob.junk", []byte(`{"from": 7}`)); err != nil {
		t.Fatal(err)
	}
	got, err := s.Mail().Read(ctx, "crew", "bob", false)
	var ce *mailbox.CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, mailbox.ErrCorrupt) || ce.MovedTo == "" {
		t.Fatalf("Read of an inbox with a bad entry error = %v; want a *CorruptError naming where it went", err)
	}
	if len(got) != 1 || got[0].Text != "good" {
		t.Errorf("Read with a bad entry = %+v; want the good message", got)
	}
	got, err = s.Mail().Read(ctx, "crew", "bob", false)
	if err != nil || len(got) != 1 {
		t.Errorf("second Read = %d messages, %v; want 1, nil (the bad entry moved aside)", len(got), err)
	}
	raw, err := rawJS(t, srv).Stream(ctx, "corrupt_v1_mail")
	if err != nil {
		t.Fatal(err)
	}
	info, err := raw.Info(ctx, jetstream.WithSubjectFilter("corrupt.v1.mail.crew.bob.junk.corrupt.>"))
	if err != nil || len(info.State.Subjects) != 1 {
		t.Errorf("kept-aside entries = %v, %v; want one", info.State.Subjects, err)
	}
}

// TestUnreadReadSkipsReadEntries: a read of the unread messages does not
// decode the entries marked read (an inbox keeps up to KeepRead of them),
// so a bad entry already marked read is found by a read of everything,
// not by every read of the new mail.
func TestUnreadReadSkipsReadEntries(t *testing.T) {
	srv := startServer(t, "")
	s := srv.open(t, natsstore.Options{Namespace: "skip"})
	newCrew(t, s)
	ctx := t.Context()
	if _, err := rawJS(t, srv).Publish(ctx, "skip.v1.mail.crew.bob.junk", []byte(`{"from": 7}`)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Mail().MarkRead(ctx, "crew", "bob", []string{"junk"}); err != nil || n != 1 {
		t.Fatalf("MarkRead(junk) = %d, %v; want 1, nil", n, err)
	}
	if _, err := s.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: "new"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Mail().Read(ctx, "crew", "bob", true)
	if err != nil || len(got) != 1 || got[0].Text != "new" || got[0].Read {
		t.Fatalf("unread Read = %+v, %v; want the new message alone, no error", got, err)
	}
	got, err = s.Mail().Read(ctx, "crew", "bob", false)
	if !errors.Is(err, mailbox.ErrCorrupt) || len(got) != 1 || got[0].Text != "new" {
		t.Errorf("full Read = %+v, %v; want the new message and the bad entry reported", got, err)
	}
}

// TestDeleteCutShort: a delete that stopped after writing its tombstone
// (the process died) leaves a team that reads as absent, and the next
// Create of the name finishes the delete before creating it afresh.
func TestDeleteCutShort(t *testing.T) {
	srv := startServer(t, "")
	s := srv.open(t, natsstore.Options{Namespace: "cut"})
	newCrew(t, s)
	ctx := t.Context()
	if _, err := s.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: "old"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Tasks().Create(ctx, "crew", tasklist.Task{Subject: "old"}); err != nil {
		t.Fatal(err)
	}
	kv, err := rawJS(t, srv).KeyValue(ctx, "cut_v1_teams")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "crew", []byte("troupe:deleting\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Teams().Get(ctx, "crew"); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("Get of a team being deleted error = %v; want ErrNotFound", err)
	}
	if got, err := s.Teams().List(ctx); err != nil || len(got) != 0 {
		t.Errorf("List with a team being deleted = %d teams, %v; want 0, nil", len(got), err)
	}
	if _, err := s.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: "late"}); !errors.Is(err, mailbox.ErrNoTeam) {
		t.Errorf("Send to a team being deleted error = %v; want ErrNoTeam", err)
	}
	c, err := team.Create(ctx, s.Teams(), team.CreateOptions{Name: "crew", Now: testNow, Pick: func(int) int { return 0 }})
	if err != nil || c.Name != "crew" {
		t.Fatalf("Create over a cut-short delete = %q, %v; want the name crew, nil", c.Name, err)
	}
	if got, err := s.Mail().Read(ctx, "crew", "bob", false); err != nil || len(got) != 0 {
		t.Errorf("Read(bob) in the new crew = %d messages, %v; want none of the old team's", len(got), err)
	}
	if got, err := s.Tasks().List(ctx, "crew"); err != nil || len(got) != 0 {
		t.Errorf("tasks of the new crew = %d, %v; want none of the old team's", len(got), err)
	}
}

// TestWatchEndsWithCtx: a watch's channel closes when its ctx ends, and
// the store's goroutines end with Close.
func TestWatchEndsWithCtx(t *testing.T) {
	srv := startServer(t, "")
	s := srv.open(t, natsstore.Options{})
	newCrew(t, s)
	ctx, cancel := context.WithCancel(t.Context())
	kicks, err := s.Mail().Watch(ctx, "crew", "bob")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-kicks:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("Watch channel still open 10s after its ctx ended")
		}
	}
}

// TestCloseWithServerDown: Close returns, and closes watches, while the
// server is unreachable.
func TestCloseWithServerDown(t *testing.T) {
	srv := startServer(t, "")
	s := srv.open(t, natsstore.Options{})
	newCrew(t, s)
	kicks, err := s.Mail().Watch(t.Context(), "crew", "bob")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Mail().Read(t.Context(), "crew", "bob", false); err != nil {
		t.Fatal(err)
	}
	unlock, err := s.Tasks().Lock(t.Context(), "crew")
	if err != nil {
		t.Fatal(err)
	}
	srv.stop()
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close with the server down = %v; want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close still running 30s after the server went down")
	}
	unlock() // after Close: returns without reaching the server
	for range kicks {
	}
}

// jetStream is a plain JetStream client of the server(s) at url, closed
// at the test's end: for looking at what the store made.
func jetStream(t testing.TB, url string) jetstream.JetStream {
	t.Helper()
	nc, err := natsgo.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}
