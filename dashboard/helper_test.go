package dashboard_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/dashboard"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// fixture is a team "alpha" (lead, alice, bob) in a file store, a
// dashboard over it, and a second store on the same folder standing for
// another process (the troupe CLI, a teammate) that writes to it.
type fixture struct {
	root  string
	dash  *file.Store // the store the dashboard reads
	other *file.Store // another writer on the same folder
	srv   *httptest.Server
	tasks *tasklist.List // on other
}

func newFixture(t *testing.T, cfg dashboard.Config) *fixture {
	t.Helper()
	ctx := t.Context()
	root := t.TempDir()
	open := func() *file.Store {
		s, err := file.Open(root, file.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	f := &fixture{root: root, dash: open(), other: open()}
	now := time.Now()
	if _, err := team.Create(ctx, f.other.Teams(), team.CreateOptions{Name: "alpha", Description: "builds the widget",
		Cwd: root, Now: now, Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []team.Member{
		{Name: "alice", Color: "blue", Model: "claude-sonnet-4-5", BackendType: team.BackendInProcess},
		{Name: "bob", Color: "green", Model: "gpt-5", BackendType: team.BackendTmux},
	} {
		m.AgentID = team.AgentID(m.Name, "alpha")
		m.Cwd = root
		if _, err := team.AddMember(ctx, f.other.Teams(), "alpha", m, now); err != nil {
			t.Fatal(err)
		}
	}
	f.tasks = tasklist.New(f.other.Tasks(), "alpha")
	cfg.Teams, cfg.Mail, cfg.Tasks = f.dash.Teams(), f.dash.Mail(), f.dash.Tasks()
	s, err := dashboard.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(s)
	t.Cleanup(func() {
		f.srv.CloseClientConnections() // event streams end only when their connection does
		f.srv.Close()
	})
	return f
}

// send stores a message from another writer.
func (f *fixture) send(t *testing.T, from, to, text string) {
	t.Helper()
	if _, err := f.other.Mail().Send(t.Context(), "alpha", to, mailbox.Message{From: from, Text: text}); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }
