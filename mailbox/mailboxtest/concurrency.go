package mailboxtest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

// testConcurrentSenders has Senders goroutines each send PerSender
// numbered messages to one inbox.
func testConcurrentSenders(t *testing.T, ts team.Store, ms mailbox.Store) {
	var senders []string
	for i := range Senders {
		senders = append(senders, fmt.Sprint("s", i))
	}
	newTeam(t, ts, append(senders, "sink")...)
	var wg sync.WaitGroup
	for _, from := range senders {
		wg.Go(func() {
			for seq := range PerSender {
				if _, err := ms.Send(t.Context(), teamName, "sink", mailbox.Message{From: from, Text: fmt.Sprint(seq)}); err != nil {
					t.Errorf("Send(%s #%d) error: %v", from, seq, err)
					return
				}
			}
		})
	}
	wg.Wait()
	got := read(t, ms, "sink", false)
	if len(got) != Senders*PerSender {
		t.Errorf("Read(sink) = %d messages; want %d", len(got), Senders*PerSender)
	}
	next := map[string]int{}
	for i, m := range got {
		want := fmt.Sprint(next[m.From])
		if m.Text != want {
			t.Errorf("message %d from %s = %q; want %q (lost, duplicated or reordered)", i, m.From, m.Text, want)
		}
		next[m.From]++
	}
	for _, from := range senders {
		if next[from] != PerSender {
			t.Errorf("sink has %d messages from %s; want %d", next[from], from, PerSender)
		}
	}
}

func testWatch(t *testing.T, ts team.Store, ms mailbox.Store) {
	newTeam(t, ts, "alice", "bob")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	kicks, err := ms.Watch(ctx, teamName, "bob")
	if err != nil {
		t.Fatalf("Watch(bob) error: %v", err)
	}
	deadline := time.NewTimer(WatchDeadline)
	defer deadline.Stop()
	d := send(t, ms, "bob", mailbox.Message{From: "alice", Text: "wake up"})
	// A kick may be spurious: re-read on each until the message shows.
	for seen := false; !seen; {
		select {
		case _, ok := <-kicks:
			if !ok {
				t.Fatal("Watch channel closed before ctx was canceled")
			}
			for _, m := range read(t, ms, "bob", true) {
				seen = seen || m.ID == d[0].ID
			}
		case <-deadline.C:
			t.Fatalf("no kick within %v of a Send", WatchDeadline)
		}
	}

	// Several writes may coalesce into one kick, but at least one comes.
	for i := range 3 {
		send(t, ms, "bob", mailbox.Message{From: "alice", Text: fmt.Sprint("burst ", i)})
	}
	select {
	case <-kicks:
	case <-deadline.C:
		t.Fatalf("no kick within %v of a burst of sends", WatchDeadline)
	}

	cancel()
	for {
		select {
		case _, ok := <-kicks:
			if !ok {
				return
			}
		case <-deadline.C:
			t.Fatalf("Watch channel still open %v after ctx was canceled", WatchDeadline)
		}
	}
}
