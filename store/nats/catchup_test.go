package nats

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestInboxFromLeader: a read that a replica answered without the newest
// messages is completed from the stream's leader, in order, skipping other
// inboxes' messages and messages deleted since; a replica further behind
// than leaderCatchUp messages makes the read start over (errStalled).
func TestInboxFromLeader(t *testing.T) {
	s := openInternal(t, Options{Namespace: "catchup"})
	ctx := t.Context()
	var bob []uint64
	for i := range 6 {
		for _, who := range []string{"bob", "amy"} {
			ack, err := s.js.Publish(ctx, s.inboxSubject("crew", who)+fmt.Sprintf(".m%d", i), []byte(fmt.Sprintf("%s %d", who, i)))
			if err != nil {
				t.Fatal(err)
			}
			if who == "bob" {
				bob = append(bob, ack.Sequence)
			}
		}
	}
	if err := s.mail.DeleteMsg(ctx, bob[3]); err != nil {
		t.Fatal(err)
	}
	last := bob[5]
	all, err := s.scanInboxDirect(ctx, "crew", "bob", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, have := range []int{0, 1, 3, 4} { // as a replica behind by 4, 3, 2 or 1 message(s) answered
		got, err := s.inboxFromLeader(ctx, "crew", "bob", all[:have:have], 0, last, 0)
		if err != nil {
			t.Fatalf("from %d messages: %v", have, err)
		}
		var seqs []uint64
		for _, m := range got {
			if want := fmt.Sprintf("bob %d", indexOf(bob, m.seq)); string(m.data) != want || m.subject != s.inboxSubject("crew", "bob")+fmt.Sprintf(".m%d", indexOf(bob, m.seq)) {
				t.Errorf("from %d messages: message %d is %q on %s; want %q", have, m.seq, m.data, m.subject, want)
			}
			seqs = append(seqs, m.seq)
		}
		if want := []uint64{bob[0], bob[1], bob[2], bob[4], bob[5]}; fmt.Sprint(seqs) != fmt.Sprint(want) {
			t.Errorf("from %d messages: sequences %v; want %v (the deleted one skipped)", have, seqs, want)
		}
	}

	// Further behind than leaderCatchUp: start over.
	for i := range leaderCatchUp + 1 {
		ack, err := s.js.Publish(ctx, s.inboxSubject("crew", "bob")+fmt.Sprintf(".n%d", i), []byte("more"))
		if err != nil {
			t.Fatal(err)
		}
		last = ack.Sequence
	}
	if _, err := s.inboxFromLeader(ctx, "crew", "bob", all, 0, last, 0); !errors.Is(err, errStalled) {
		t.Errorf("behind by %d messages: %v; want errStalled", leaderCatchUp+1, err)
	}
}

func indexOf(seqs []uint64, seq uint64) int {
	for i, s := range seqs {
		if s == seq {
			return i
		}
	}
	return -1
}

// TestReadIncludesDeliveredMessage: a message that this store's inbox
// watch delivered is one a read of that inbox must include, even when the
// stream's leader does not have it yet (on a cluster a follower may apply
// a message, and its consumer deliver it, before the leader applies it):
// the read waits for it, and gives it up only deliveredFor after the
// delivery (a message deleted meanwhile).
func TestReadIncludesDeliveredMessage(t *testing.T) {
	s := openInternal(t, Options{Namespace: "seen"})
	ctx := t.Context()
	inbox := s.inboxSubject("crew", "bob")

	// The watch notes what it delivers.
	kick, err := s.Mail().Watch(ctx, "crew", "bob")
	if err != nil {
		t.Fatal(err)
	}
	ack, err := s.js.Publish(ctx, inbox+".m1", []byte(`x`))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-kick:
	case <-time.After(10 * time.Second):
		t.Fatal("no kick within 10 s")
	}
	if got := s.seen.floor(inbox, time.Now()); got != ack.Sequence {
		t.Errorf("delivered floor of bob's inbox = %d; want %d, the message the watch delivered", got, ack.Sequence)
	}

	// A delivered message the leader does not have: the read waits.
	s.seen.note(inbox, ack.Sequence+100, time.Now())
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if out, err := s.scanInbox(short, "crew", "bob", 0); err == nil {
		t.Errorf("read of an inbox whose delivered message the leader lacks = %d messages, no error; want it to wait", len(out))
	}
	// Given up deliveredFor after its delivery.
	s.seen.mu.Lock()
	s.seen.seqs[inbox] = deliveredSeq{seq: ack.Sequence + 100, at: time.Now().Add(-deliveredFor - time.Second)}
	s.seen.mu.Unlock()
	out, err := s.scanInbox(ctx, "crew", "bob", 0)
	if err != nil || len(out) != 1 || out[0].seq != ack.Sequence {
		t.Errorf("read once the delivery is old = %v, %v; want the one stored message", out, err)
	}
}

// TestReadWaitsBrieflyForTheLeader: a read that needs a message the watch
// delivered and the leader has not applied yet asks the leader again
// within milliseconds, instead of starting over after a retry's backoff
// (100 ms and up).
func TestReadWaitsBrieflyForTheLeader(t *testing.T) {
	var logs lockedBuffer
	s := openInternal(t, Options{Namespace: "lag", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := t.Context()
	inbox := s.inboxSubject("crew", "bob")
	first, err := s.js.Publish(ctx, inbox+".m1", []byte(`x`))
	if err != nil {
		t.Fatal(err)
	}
	// The next message was delivered by the watch before the leader
	// stored it, as when a follower's consumer delivers it before the
	// leader applies it; the leader stores it 10 ms into the read.
	next := first.Sequence + 1
	go func() {
		time.Sleep(10 * time.Millisecond)
		if _, err := s.js.Publish(ctx, inbox+".m2", []byte(`y`)); err != nil {
			t.Error(err)
		}
	}()
	out, err := s.retryInboxFromLeader(ctx, []rawMsg{{seq: first.Sequence, subject: inbox + ".m1", data: []byte(`x`)}}, next)
	if err != nil || len(out) != 2 || out[1].seq != next {
		t.Fatalf("read = %v, %v; want both messages", out, err)
	}
	if strings.Contains(logs.String(), "retrying") {
		t.Errorf("the read was retried; want the leader asked again within leaderLagWait:\n%s", logs.String())
	}
}

// retryInboxFromLeader completes bob's read out from the leader as
// scanInbox does, within its retries, seen and last being next.
func (s *Store) retryInboxFromLeader(ctx context.Context, out []rawMsg, next uint64) ([]rawMsg, error) {
	err := s.retry(ctx, "read", 0, func(ctx context.Context, _ int) (err error) {
		out, err = s.inboxFromLeader(ctx, "crew", "bob", out, 0, next, next)
		return err
	})
	return out, err
}
