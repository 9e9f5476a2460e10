package nats_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/team"
)

// TestWatchesShareConsumers: a store's inbox watches of one team share one
// consumer of the mail stream, and its task-list watches one KV watch, so
// that a thousand idle teammates in a process do not hold two thousand
// consumers (each with its own pull requests and heartbeats); each inbox
// watch is still kicked for its own inbox only, and the shared consumer
// ends with the last watch.
func TestWatchesShareConsumers(t *testing.T) {
	srv := startServer(t, "")
	s := srv.open(t, natsstore.Options{Namespace: "fan"})
	ctx := t.Context()
	if _, err := team.Create(ctx, s.Teams(), team.CreateOptions{Name: "crew", Now: testNow, Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	const n = 40
	wctx, cancel := context.WithCancel(ctx)
	inboxes := make([]<-chan struct{}, n)
	for i := range n {
		name := fmt.Sprintf("m%d", i)
		if _, err := team.AddMember(ctx, s.Teams(), "crew", team.Member{Name: name}, testNow); err != nil {
			t.Fatal(err)
		}
		var err error
		if inboxes[i], err = s.Mail().Watch(wctx, "crew", name); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Tasks().Watch(wctx, "crew"); err != nil {
			t.Fatal(err)
		}
	}
	js := jetStream(t, srv.url())
	consumers := func(stream string) int {
		str, err := js.Stream(ctx, stream)
		if err != nil {
			t.Fatalf("stream %s: %v", stream, err)
		}
		info, err := str.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Consumers
	}
	if got := consumers("fan_v1_mail"); got != 1 {
		t.Errorf("%d inbox watches hold %d consumers of the mail stream; want 1", n, got)
	}
	if got := consumers("KV_fan_v1_tasks"); got != 1 {
		t.Errorf("%d task-list watches hold %d consumers of the tasks bucket; want 1", n, got)
	}
	for _, ch := range inboxes { // drop any kick from the joins
		select {
		case <-ch:
		default:
		}
	}
	if _, err := s.Mail().Send(ctx, "crew", "m7", mailbox.Message{From: team.LeadName, Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-inboxes[7]:
	case <-time.After(10 * time.Second):
		t.Fatal("the watch of m7's inbox not kicked within 10 s of a message to m7")
	}
	time.Sleep(100 * time.Millisecond)
	for i, ch := range inboxes {
		select {
		case <-ch:
			t.Errorf("the watch of m%d's inbox kicked by a message to m7", i)
		default:
		}
	}
	cancel()
	for i, ch := range inboxes {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("the watch of m%d still open 10 s after its ctx ended", i)
		}
		for range ch { // until closed
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for consumers("fan_v1_mail")+consumers("KV_fan_v1_tasks") > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after every watch ended: %d mail and %d task consumers left; want 0", consumers("fan_v1_mail"), consumers("KV_fan_v1_tasks"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
