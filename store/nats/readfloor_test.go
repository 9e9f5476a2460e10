package nats_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/troupe-dev/troupe/mailbox"
	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/team"
)

// texts returns the texts of msgs.
func texts(msgs []mailbox.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Text)
	}
	return out
}

// TestReadFloor: a read of the unread messages asks only for those after
// the run of read messages the inbox begins with, as this store last saw
// it; a message left unread below read ones is still shown, and messages
// another store marks read are skipped and then passed by the floor.
func TestReadFloor(t *testing.T) {
	for _, consumer := range []bool{false, true} {
		name := "direct"
		if consumer {
			name = "consumer"
		}
		t.Run(name, func(t *testing.T) {
			if consumer {
				natsstore.ReadByConsumer(t)
			}
			srv := startServer(t, "")
			s := srv.open(t, natsstore.Options{Namespace: "floor" + name})
			other := srv.open(t, natsstore.Options{Namespace: "floor" + name})
			newCrew(t, s)
			ctx := t.Context()
			send := func(text string) string {
				t.Helper()
				d, err := other.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: text})
				if err != nil {
					t.Fatal(err)
				}
				return d[0].ID
			}
			unread := func(want ...string) {
				t.Helper()
				got, err := s.Mail().Read(ctx, "crew", "bob", true)
				if err != nil || !slices.Equal(texts(got), want) {
					t.Fatalf("unread Read = %q, %v; want %q", texts(got), err, want)
				}
			}
			mark := func(by *natsstore.Store, ids ...string) {
				t.Helper()
				if _, err := by.Mail().MarkRead(ctx, "crew", "bob", ids); err != nil {
					t.Fatal(err)
				}
			}
			m1, m2 := send("one"), send("two")
			m3 := send("three")
			mark(s, m2)
			unread("one", "three")
			if f := natsstore.ReadFloor(s, "crew", "bob"); f != 0 {
				t.Fatalf("floor with the first message unread = %d; want 0", f)
			}
			mark(other, m1) // by another store: this one learns it from the marks
			unread("three")
			f := natsstore.ReadFloor(s, "crew", "bob")
			if f == 0 {
				t.Fatal("floor after the first two messages were read = 0; want the second's sequence")
			}
			unread("three")
			if g := natsstore.ReadFloor(s, "crew", "bob"); g != f {
				t.Fatalf("floor moved from %d to %d with nothing newly read", f, g)
			}
			mark(s, m3)
			// A hundred read messages: the unread read fetches what is
			// after the floor, a full read fetches them all.
			var ids, sent []string
			for i := range 100 {
				text := strings.Repeat("x", 300) + strconv.Itoa(i)
				ids, sent = append(ids, send(text)), append(sent, text)
			}
			unread(sent...)
			mark(other, ids...)
			unread()
			m5 := send("five")
			unread("five")
			before := natsstore.InBytes(s)
			unread("five")
			unreadBytes := natsstore.InBytes(s) - before
			before = natsstore.InBytes(s)
			all, err := s.Mail().Read(ctx, "crew", "bob", false)
			// The oldest read messages past KeepRead were pruned.
			if want := natsstore.DefaultKeepRead + 1; err != nil || len(all) != want {
				t.Fatalf("full Read = %d messages, %v; want %d", len(all), err, want)
			}
			fullBytes := natsstore.InBytes(s) - before
			if unreadBytes*4 > fullBytes {
				t.Errorf("an unread read received %d bytes, a full read %d; want the unread one to skip the read messages", unreadBytes, fullBytes)
			}
			mark(s, m5)
			unread()
		})
	}
}

// TestReadFloorForgottenOnReconnect: a server whose data was wiped starts
// its stream's sequences again; a store that was connected forgets its
// floors, so the new stream's first messages are not taken for read ones.
func TestReadFloorForgottenOnReconnect(t *testing.T) {
	srv := startServer(t, "")
	s := srv.open(t, natsstore.Options{Namespace: "wipe"})
	newCrew(t, s)
	ctx := t.Context()
	readAllRead(t, s, 3)
	srv.stop()
	if err := os.RemoveAll(srv.dir); err != nil {
		t.Fatal(err)
	}
	srv.start(t)
	fresh := srv.open(t, natsstore.Options{Namespace: "wipe"}) // makes the streams again
	newCrew(t, fresh)
	if _, err := fresh.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: "after the wipe"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := s.Mail().Read(ctx, "crew", "bob", true)
		if err == nil && slices.Equal(texts(got), []string{"after the wipe"}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("unread Read after the wipe = %q, %v; want the new message", texts(got), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMarkReadKnowsWhatItRead: marking read the messages a read just
// returned asks the server for none of their places, and marks those
// messages, not others; a store that did not read them looks each one up.
func TestMarkReadKnowsWhatItRead(t *testing.T) {
	srv := startServer(t, "")
	s := srv.open(t, natsstore.Options{Namespace: "known"})
	other := srv.open(t, natsstore.Options{Namespace: "known"})
	newCrew(t, s)
	ctx := t.Context()
	for _, text := range []string{"a", "b", "c", "d", "e"} {
		if _, err := other.Mail().Send(ctx, "crew", "bob", mailbox.Message{From: "alice", Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Mail().Read(ctx, "crew", "bob", true)
	if err != nil || len(got) != 5 {
		t.Fatalf("Read = %q, %v; want 5 messages", texts(got), err)
	}
	before := natsstore.OutMsgs(s)
	if n, err := s.Mail().MarkRead(ctx, "crew", "bob", []string{got[1].ID, got[3].ID}); err != nil || n != 2 {
		t.Fatalf("MarkRead(b, d) = %d, %v; want 2, nil", n, err)
	}
	known := natsstore.OutMsgs(s) - before
	before = natsstore.OutMsgs(other)
	if n, err := other.Mail().MarkRead(ctx, "crew", "bob", []string{got[0].ID, got[2].ID}); err != nil || n != 2 {
		t.Fatalf("MarkRead(a, c) by a store that did not read = %d, %v; want 2, nil", n, err)
	}
	looked := natsstore.OutMsgs(other) - before
	if known+2 > looked {
		t.Errorf("MarkRead of two messages the store had read sent %d messages, of two it had not %d; want the lookups saved", known, looked)
	}
	got, err = s.Mail().Read(ctx, "crew", "bob", true)
	if err != nil || !slices.Equal(texts(got), []string{"e"}) {
		t.Fatalf("unread Read after marking = %q, %v; want [e]", texts(got), err)
	}
}

// sendBob sends text from alice to bob and returns its id.
func sendBob(t *testing.T, s *natsstore.Store, text string) string {
	t.Helper()
	d, err := s.Mail().Send(t.Context(), "crew", "bob", mailbox.Message{From: "alice", Text: text})
	if err != nil {
		t.Fatal(err)
	}
	return d[0].ID
}

// TestMarkReadPastPrunedMessage: a message a store read, then marked read
// and pruned by another store, is passed over when the first store marks
// its batch read: the rest of the batch is marked, and the call does not
// fail on the message that is gone (its delete is not repeated).
func TestMarkReadPastPrunedMessage(t *testing.T) {
	srv := startServer(t, "")
	s := srv.open(t, natsstore.Options{Namespace: "pruned", KeepRead: 2})
	other := srv.open(t, natsstore.Options{Namespace: "pruned", KeepRead: 2})
	newCrew(t, s)
	ctx := t.Context()
	x, y := sendBob(t, s, "x"), sendBob(t, s, "y")
	if got, err := s.Mail().Read(ctx, "crew", "bob", true); err != nil || len(got) != 2 {
		t.Fatalf("Read = %q, %v; want x and y", texts(got), err)
	}
	if _, err := other.Mail().MarkRead(ctx, "crew", "bob", []string{x}); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"a", "b"} {
		if _, err := other.Mail().MarkRead(ctx, "crew", "bob", []string{sendBob(t, other, text)}); err != nil {
			t.Fatal(err) // the second prunes x
		}
	}
	if _, err := s.Mail().MarkRead(ctx, "crew", "bob", []string{x, y}); err != nil {
		t.Fatalf("MarkRead(x, y) with x pruned = %v", err)
	}
	if got, err := s.Mail().Read(ctx, "crew", "bob", true); err != nil || len(got) != 0 {
		t.Fatalf("unread after MarkRead(x, y) = %q, %v; want none", texts(got), err)
	}
	// Later marks prune past the mark of x that is gone.
	for _, text := range []string{"c", "d", "e"} {
		if _, err := s.Mail().MarkRead(ctx, "crew", "bob", []string{sendBob(t, s, text)}); err != nil {
			t.Fatalf("MarkRead(%s) = %v", text, err)
		}
	}
}

// TestMarkReadAfterTeamRemade: a store that read a message, then saw its
// team deleted and made again, marks that message (its place remembered,
// now gone) without leaving the inbox unable to mark anything once the
// mark is the oldest.
func TestMarkReadAfterTeamRemade(t *testing.T) {
	srv := startServer(t, "")
	s := srv.open(t, natsstore.Options{Namespace: "remade", KeepRead: 2})
	other := srv.open(t, natsstore.Options{Namespace: "remade", KeepRead: 2})
	newCrew(t, s)
	ctx := t.Context()
	x := sendBob(t, s, "before")
	if got, err := s.Mail().Read(ctx, "crew", "bob", true); err != nil || len(got) != 1 {
		t.Fatalf("Read = %q, %v", texts(got), err)
	}
	if err := other.Teams().Delete(ctx, "crew", func(team.Config) error { return nil }); err != nil {
		t.Fatal(err)
	}
	newCrew(t, other)
	if _, err := s.Mail().MarkRead(ctx, "crew", "bob", []string{x}); err != nil {
		t.Fatalf("MarkRead of the old team's message = %v", err)
	}
	for _, text := range []string{"a", "b", "c"} {
		if _, err := other.Mail().MarkRead(ctx, "crew", "bob", []string{sendBob(t, other, text)}); err != nil {
			t.Fatalf("MarkRead(%s) = %v", text, err)
		}
	}
	if got, err := other.Mail().Read(ctx, "crew", "bob", true); err != nil || len(got) != 0 {
		t.Fatalf("unread after marking a, b, c = %q, %v; want none", texts(got), err)
	}
}

// heldGet holds the read marks' Get until release is closed, so that it
// answers after the inbox scan (the two run side by side).
type heldGet struct {
	jetstream.KeyValue
	release chan struct{}
}

func (g heldGet) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	<-g.release
	return g.KeyValue.Get(ctx, key)
}

// TestReadPastPruneBetweenScanAndMarks: a read message pruned (deleted,
// its mark dropped) by another store after a read's scan saw it and
// before the read's marks came is not returned unread.
func TestReadPastPruneBetweenScanAndMarks(t *testing.T) {
	srv := startServer(t, "")
	s := srv.open(t, natsstore.Options{Namespace: "between"})
	other := srv.open(t, natsstore.Options{Namespace: "between", KeepRead: 1})
	newCrew(t, s)
	ctx := t.Context()
	one, two := sendBob(t, s, "one"), sendBob(t, s, "two")
	sendBob(t, s, "three")
	if _, err := other.Mail().MarkRead(ctx, "crew", "bob", []string{one}); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	natsstore.WrapReadMarksKV(s, func(kv jetstream.KeyValue) jetstream.KeyValue { return heldGet{kv, release} })
	natsstore.ReadHook(s, func(stage string) {
		if stage != "scanned" {
			return
		}
		// The scan saw one; the marks have not answered.
		if _, err := other.Mail().MarkRead(ctx, "crew", "bob", []string{two}); err != nil {
			t.Error(err) // marks [one two] -> one pruned (deleted) -> marks [two]
		}
		close(release)
	})
	got, err := s.Mail().Read(ctx, "crew", "bob", true)
	if err != nil || !slices.Equal(texts(got), []string{"three"}) {
		t.Fatalf("unread Read = %q, %v; want [three]: one was read and two marked before the marks came", texts(got), err)
	}
}

// TestReadAcrossWipe: a read that took its floor before the server's data
// was wiped does not scan the new stream from that floor: the new
// messages are all returned.
func TestReadAcrossWipe(t *testing.T) {
	srv := startServer(t, "")
	opts := natsstore.Options{Namespace: "across", KeepRead: 2, MaxReconnectWait: 100 * time.Millisecond, RequestTimeout: 30 * time.Second}
	s := srv.open(t, opts)
	newCrew(t, s)
	ctx := t.Context()
	readAllRead(t, s, 5)
	var once sync.Once
	natsstore.ReadHook(s, func(stage string) {
		if stage != "floor" {
			return
		}
		once.Do(func() {
			srv.stop()
			if err := os.RemoveAll(srv.dir); err != nil {
				t.Error(err)
			}
			srv.start(t)
			fresh := srv.open(t, opts)
			newCrew(t, fresh)
			for i := range 3 {
				sendBob(t, fresh, fmt.Sprint("new", i))
			}
			for deadline := time.Now().Add(20 * time.Second); natsstore.ReadFloor(s, "crew", "bob") != 0; {
				if time.Now().After(deadline) {
					t.Error("the store did not forget its floors")
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	})
	got, err := s.Mail().Read(ctx, "crew", "bob", true)
	if err != nil || !slices.Equal(texts(got), []string{"new0", "new1", "new2"}) {
		t.Fatalf("unread Read across the wipe = %q, %v; want the new server's three messages", texts(got), err)
	}
}

// readAllRead sends bob n messages, marks them read and reads none
// unread, so that s's read floor for bob's inbox is at least n.
func readAllRead(t *testing.T, s *natsstore.Store, n int) {
	t.Helper()
	ctx := t.Context()
	var ids []string
	for i := range n {
		ids = append(ids, sendBob(t, s, fmt.Sprint("old", i)))
	}
	if _, err := s.Mail().MarkRead(ctx, "crew", "bob", ids); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Mail().Read(ctx, "crew", "bob", true); err != nil || len(got) != 0 {
		t.Fatalf("unread Read = %q, %v; want none", texts(got), err)
	}
	if f := natsstore.ReadFloor(s, "crew", "bob"); f < uint64(n) {
		t.Fatalf("floor = %d; want at least %d", f, n)
	}
}
