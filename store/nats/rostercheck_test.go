package nats_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/troupe-dev/troupe/mailbox"
	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/team"
)

// TestSendChecksRosterCheaply: a send checks its recipient against the
// roster this store decoded last, once the server says the team entry has
// not changed since, instead of reading the whole entry again; a change
// made by another store (process) is seen by the very next send: a member
// added there is a recipient here, a team deleted there is gone here.
func TestSendChecksRosterCheaply(t *testing.T) {
	srv := startServer(t, "")
	a := srv.open(t, natsstore.Options{Namespace: "roster"})
	b := srv.open(t, natsstore.Options{Namespace: "roster"})
	ctx := t.Context()
	if _, err := team.Create(ctx, a.Teams(), team.CreateOptions{Name: "crew", Now: testNow, Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	// A roster of 200 members with long prompts: about 100 KB.
	for i := range 200 {
		m := team.Member{Name: fmt.Sprintf("m%d", i), Prompt: fmt.Sprintf("%0500d", i)}
		if _, err := team.AddMember(ctx, a.Teams(), "crew", m, testNow); err != nil {
			t.Fatal(err)
		}
	}
	send := func(to string) error {
		_, err := b.Mail().Send(ctx, "crew", to, mailbox.Message{From: "m1", Text: "hi"})
		return err
	}
	if err := send("m7"); err != nil {
		t.Fatal(err)
	}
	before := natsstore.InBytes(b)
	const sends = 20
	for range sends {
		if err := send("m7"); err != nil {
			t.Fatal(err)
		}
	}
	if got := (natsstore.InBytes(b) - before) / sends; got > 2000 {
		t.Errorf("a send to an unchanged team received %d bytes; want the roster not read again (under 2,000)", got)
	}

	if _, err := team.AddMember(ctx, a.Teams(), "crew", team.Member{Name: "late"}, testNow); err != nil {
		t.Fatal(err)
	}
	if err := send("late"); err != nil {
		t.Errorf("send to a member another store just added = %v; want it delivered", err)
	}
	var unknown *mailbox.UnknownRecipientError
	if err := send("nobody"); !errors.As(err, &unknown) {
		t.Errorf("send to a stranger = %v; want *mailbox.UnknownRecipientError", err)
	}
	if err := a.Teams().Delete(ctx, "crew", nil); err != nil {
		t.Fatal(err)
	}
	if err := send("m7"); !errors.Is(err, mailbox.ErrNoTeam) {
		t.Errorf("send to a team another store deleted = %v; want mailbox.ErrNoTeam", err)
	}
	if _, err := team.Create(ctx, a.Teams(), team.CreateOptions{Name: "crew", Now: testNow, Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	if err := send("m7"); !errors.As(err, &unknown) {
		t.Errorf("send to a member of the deleted team, once a new team of its name exists = %v; want *mailbox.UnknownRecipientError", err)
	}
}
