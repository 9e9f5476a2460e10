package swarm

import (
	"context"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/mem"
	"github.com/troupe-dev/troupe/team"
)

func TestSigningMail(t *testing.T) {
	st := mem.New(mem.Options{})
	defer st.Close()
	ctx := context.Background()
	if _, err := team.Create(ctx, st.Teams(), team.CreateOptions{Name: "signed", Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"ann", "bob"} {
		if _, err := team.AddMember(ctx, st.Teams(), "signed", team.Member{Name: n}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	signer, err := mailbox.NewLeadSigner(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	key := signer.VerifyKey()
	sm := SigningMail{Store: st.Mail(), Teams: st.Teams(), Signer: signer}
	if _, err := sm.Send(ctx, "signed", "ann", mailbox.Message{From: team.LeadName, Text: "direct"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sm.Send(ctx, "signed", mailbox.Broadcast, mailbox.Message{From: team.LeadName, Text: "to all"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sm.Send(ctx, "signed", "bob", mailbox.Message{From: "ann", Text: "from a peer"}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"ann", "bob"} {
		msgs, err := st.Mail().Read(ctx, "signed", n, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			err := key.Verify(m)
			switch m.From {
			case team.LeadName:
				if err != nil {
					t.Errorf("%s: the lead's %q does not verify: %v", n, m.Text, err)
				}
			default:
				if _, signed := m.Extra[mailbox.LeadSigKey]; signed {
					t.Errorf("%s: a peer's message was signed", n)
				}
			}
		}
		if n == "ann" && len(msgs) != 2 || n == "bob" && len(msgs) != 2 {
			t.Errorf("%s has %d messages, want 2", n, len(msgs))
		}
	}
	// A signed message altered in the inbox no longer verifies.
	msgs, _ := st.Mail().Read(ctx, "signed", "ann", false)
	forged := msgs[0]
	forged.Text = "rm -rf"
	if err := key.Verify(forged); err == nil {
		t.Error("an altered message verified")
	}
}
