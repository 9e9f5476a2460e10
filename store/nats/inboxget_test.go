package nats_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	natsgo "github.com/nats-io/nats.go"

	"github.com/troupe-dev/troupe/mailbox"
	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/team"
)

// inboxTeam opens a store on ts with team crew of members ann and bob.
func inboxTeam(t testing.TB, ts *testServer, ns string) *natsstore.Store {
	t.Helper()
	s := ts.open(t, natsstore.Options{Namespace: ns})
	ctx := t.Context()
	if _, err := team.Create(ctx, s.Teams(), team.CreateOptions{Name: "crew", Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ann", "bob"} {
		if _, err := team.AddMember(ctx, s.Teams(), "crew", team.Member{Name: name}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestInboxReadCreatesNoConsumer: reading an inbox makes no consumer (it
// made one per read, a JetStream API request the stream's leader
// applies, then deleted it): the server sees no consumer creation; and on
// a server without a cluster, no request for the leader's newest message.
func TestInboxReadCreatesNoConsumer(t *testing.T) {
	ts := startServer(t, "")
	s := inboxTeam(t, ts, "direct")
	ctx := t.Context()
	for i := range 3 {
		if _, err := s.Mail().Send(ctx, "crew", "ann", mailbox.Message{From: "bob", Text: fmt.Sprint("m", i)}); err != nil {
			t.Fatal(err)
		}
	}
	obs, err := natsgo.Connect(ts.url())
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close()
	consumerAPI := subscribeSync(t, obs, "$JS.API.CONSUMER.>")
	leaderGetAPI := subscribeSync(t, obs, "$JS.API.STREAM.MSG.GET.>")
	if err := obs.Flush(); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.Mail().Read(ctx, "crew", "ann", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 {
		t.Fatalf("read %d messages; want 3", len(msgs))
	}
	if err := obs.Flush(); err != nil { // the requests the read made have reached us
		t.Fatal(err)
	}
	creates := 0
	for _, subj := range drained(consumerAPI) {
		if strings.Contains(subj, "CREATE") {
			creates++
		}
	}
	leaderGets := len(drained(leaderGetAPI))
	if n := creates; n != 0 {
		t.Errorf("a read of an inbox created %d consumers; want 0", n)
	}
	if n := leaderGets; n != 0 {
		t.Errorf("a read of an inbox on a server without a cluster asked the stream leader %d times for the newest message; want 0 (no other copy)", n)
	}
}

// TestInboxReadBatches: an inbox read in several batches returns its
// messages in order, without the other inbox's and without one deleted
// in the middle, and with their read marks.
func TestInboxReadBatches(t *testing.T) {
	natsstore.SetDirectBatch(t, 2)
	ts := startServer(t, "")
	s := inboxTeam(t, ts, "batches")
	ctx := t.Context()
	var ids []string
	for i := range 7 {
		to := "ann"
		if i%3 == 1 {
			to = "bob"
		}
		d, err := s.Mail().Send(ctx, "crew", to, mailbox.Message{From: "team-lead", Text: fmt.Sprint("m", i)})
		if err != nil {
			t.Fatal(err)
		}
		if to == "ann" {
			ids = append(ids, d[0].ID)
		}
	}
	js := jetStream(t, ts.url())
	str, err := js.Stream(ctx, "batches_v1_mail")
	if err != nil {
		t.Fatal(err)
	}
	if err := str.DeleteMsg(ctx, 3); err != nil { // m2, ann's
		t.Fatal(err)
	}
	if _, err := s.Mail().MarkRead(ctx, "crew", "ann", ids[:1]); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.Mail().Read(ctx, "crew", "ann", false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, fmt.Sprintf("%s:%v", m.Text, m.Read))
	}
	if want := "m0:true m3:false m5:false m6:false"; strings.Join(got, " ") != want {
		t.Errorf("read %q; want %q", strings.Join(got, " "), want)
	}
	unread, err := s.Mail().Read(ctx, "crew", "ann", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(unread) != 3 {
		t.Errorf("%d unread; want 3", len(unread))
	}
	empty, err := s.Mail().Read(ctx, "crew", "team-lead", false)
	if err != nil || len(empty) != 0 {
		t.Errorf("read of an empty inbox: %d messages, %v; want none", len(empty), err)
	}
}

// BenchmarkInboxRead: a read of an inbox of 10 messages (5 read), by
// batched direct gets and, for comparison, through a consumer as before.
//
//	go test -run '^$' -bench BenchmarkInboxRead -benchmem ./store/nats/
func BenchmarkInboxRead(b *testing.B) {
	ts := startServer(b, "")
	for _, how := range []string{"direct", "consumer"} {
		b.Run(how, func(b *testing.B) {
			if how == "consumer" {
				natsstore.ReadByConsumer(b)
			}
			s := inboxTeam(b, ts, "")
			ctx := b.Context()
			var ids []string
			for i := range 10 {
				d, err := s.Mail().Send(ctx, "crew", "ann", mailbox.Message{From: "bob", Text: fmt.Sprint("m", i)})
				if err != nil {
					b.Fatal(err)
				}
				ids = append(ids, d[0].ID)
			}
			if _, err := s.Mail().MarkRead(ctx, "crew", "ann", ids[:5]); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				msgs, err := s.Mail().Read(ctx, "crew", "ann", true)
				if err != nil {
					b.Fatal(err)
				}
				if len(msgs) != 5 {
					b.Fatalf("%d unread; want 5", len(msgs))
				}
			}
		})
	}
}

// TestInboxReadClusterAsksLeader: on a cluster a read still asks the
// stream's leader for the inbox's newest message (a replica answering the
// direct get may not have it yet), and returns what was sent.
func TestInboxReadClusterAsksLeader(t *testing.T) {
	c := startCluster(t)
	s, err := natsstore.Open(t.Context(), c.urls(), natsstore.Options{Namespace: "lead"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	if _, err := team.Create(ctx, s.Teams(), team.CreateOptions{Name: "crew", Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	if _, err := team.AddMember(ctx, s.Teams(), "crew", team.Member{Name: "ann"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Mail().Send(ctx, "crew", "ann", mailbox.Message{From: "team-lead", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	// obs sits on the server s is connected to: once its Flush returned,
	// that server holds its interest, which a server elsewhere learns only
	// later over a route (a request sent meanwhile would not reach it).
	obs, err := natsgo.Connect(natsstore.ConnectedURL(s))
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close()
	leaderGetAPI := subscribeSync(t, obs, "$JS.API.STREAM.MSG.GET.>")
	if err := obs.Flush(); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.Mail().Read(ctx, "crew", "ann", false)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("read %d messages, %v; want 1", len(msgs), err)
	}
	if _, err := leaderGetAPI.NextMsg(10 * time.Second); err != nil {
		t.Errorf("a read on a cluster did not ask the stream leader for the inbox's newest message: %v", err)
	}
}

// subscribeSync subscribes to subject without a callback: once a Flush of
// the connection has returned, every message the server sent before it is
// queued on the subscription (drained), with no callback still to run.
func subscribeSync(t *testing.T, nc *natsgo.Conn, subject string) *natsgo.Subscription {
	t.Helper()
	sub, err := nc.SubscribeSync(subject)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// drained returns the subjects of the messages queued on sub.
func drained(sub *natsgo.Subscription) []string {
	var subjects []string
	for {
		m, err := sub.NextMsg(time.Millisecond)
		if err != nil {
			return subjects
		}
		subjects = append(subjects, m.Subject)
	}
}
