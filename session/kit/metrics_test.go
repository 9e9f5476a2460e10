package kit_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/telemetry"
)

// TestQueueDepths counts what waits in a session on the file store: the
// unread mail of each member (read mail does not count, and looking marks
// nothing read), the pending tasks of the team's list (a claimed one does
// not count) and the remote jobs no worker has taken.
func TestQueueDepths(t *testing.T) {
	ctx := t.Context()
	s, err := file.Open(filepath.Join(t.TempDir(), "home"), file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	st := kit.Stores{Teams: s.Teams(), Mail: s.Mail(), Tasks: s.Tasks()}
	cfg := team.Config{Name: "crew", LeadAgentID: team.AgentID(team.LeadName, "crew"),
		Members: []team.Member{{Name: team.LeadName, AgentID: team.AgentID(team.LeadName, "crew")}, {Name: "ann", AgentID: team.AgentID("ann", "crew")}}}
	if err := st.Teams.Create(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"one", "two", "three"} {
		if _, err := st.Mail.Send(ctx, "crew", "ann", mailbox.Message{From: team.LeadName, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := st.Mail.Read(ctx, "crew", "ann", true)
	if err != nil || len(msgs) != 3 {
		t.Fatalf("ann's unread mail = %d, %v", len(msgs), err)
	}
	if _, err := st.Mail.MarkRead(ctx, "crew", "ann", []string{msgs[0].ID}); err != nil {
		t.Fatal(err)
	}
	l := tasklist.New(st.Tasks, "crew")
	for _, subject := range []string{"a", "b", "c"} {
		if _, err := l.Create(ctx, tasklist.Draft{Subject: subject}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Claim(ctx, "ann"); err != nil {
		t.Fatal(err)
	}
	reg := task.New(task.Config{Dir: t.TempDir(), PollInterval: -1})
	t.Cleanup(func() { reg.Close(ctx) })
	if _, err := reg.Register(task.State{Type: task.RemoteAgent, Status: task.Pending, Description: "job"}, nil); err != nil {
		t.Fatal(err)
	}

	want := telemetry.Depths{Inboxes: map[string]int64{team.LeadName: 0, "ann": 2}, Tasks: 2, Jobs: 1}
	if diff := cmp.Diff(want, kit.QueueDepths(ctx, reg, "crew", st)); diff != "" {
		t.Errorf("depths (-want +got):\n%s", diff)
	}
	if got := kit.QueueDepths(ctx, reg, "", kit.Stores{}); !cmp.Equal(got, telemetry.Depths{Jobs: 1}) {
		t.Errorf("depths without a team = %+v; want the job alone", got)
	}
	if msgs, _ := st.Mail.Read(ctx, "crew", "ann", true); len(msgs) != 2 {
		t.Errorf("looking changed ann's unread mail: %d messages", len(msgs))
	}
}
