package nats

import (
	"context"
	"testing"
)

// TestReadFloorsGeneration: what a read that began before the floors were
// forgotten found is not kept; floors only rise; the messages a read
// returned are found by id once, until the next read of the inbox or a
// reset; past maxReadFloors inboxes everything is forgotten, not grown.
func TestReadFloorsGeneration(t *testing.T) {
	var f readFloors
	_, gen := f.get("a")
	f.record("a", 5, []idSeq{{"m1", 6}, {"m2", 9}}, gen)
	if got, _ := f.get("a"); got != 5 {
		t.Fatalf("floor = %d; want 5", got)
	}
	if got := f.take("b", []string{"m2"}); len(got) != 0 {
		t.Fatalf("take(b, m2) = %v: a message of another inbox", got)
	}
	if got := f.take("a", []string{"m2", "m9"}); len(got) != 1 || got["m2"] != 9 {
		t.Fatalf("take(a, m2 m9) = %v; want m2 at 9 alone", got)
	}
	if got := f.take("a", []string{"m2"}); len(got) != 0 {
		t.Fatalf("take(a, m2) again = %v; want it forgotten once taken", got)
	}
	if got := f.take("a", []string{"m1"}); got["m1"] != 6 {
		t.Fatalf("take(a, m1) = %v; want 6: taking m2 forgot m1", got)
	}
	f.record("a", 3, []idSeq{{"m3", 10}}, gen)
	if got, _ := f.get("a"); got != 5 {
		t.Fatalf("floor lowered to %d; want 5 kept", got)
	}
	f.record("a", 5, []idSeq{{"m1", 6}, {"m3", 10}}, gen)
	f.record("a", 5, []idSeq{{"m3", 10}}, gen)
	if got := f.take("a", []string{"m1"}); len(got) != 0 {
		t.Fatalf("take(a, m1) = %v after a read that did not return it", got)
	}
	_, old := f.get("b")
	f.reset()
	f.record("b", 7, []idSeq{{"m4", 11}}, old)
	if got, _ := f.get("b"); got != 0 {
		t.Fatalf("floor of a read begun before the reset = %d; want 0", got)
	}
	if got := f.take("b", []string{"m4"}); len(got) != 0 {
		t.Fatal("a read begun before the reset left its messages")
	}
	if got, _ := f.get("a"); got != 0 {
		t.Fatalf("floor after reset = %d; want 0", got)
	}
	if got := f.take("a", []string{"m3"}); len(got) != 0 {
		t.Fatal("take(a, m3) found it after the reset")
	}
	_, gen = f.get("x")
	for i := range maxReadFloors + 1 {
		f.record(string(rune(i)), 1, nil, gen)
	}
	if n := len(f.inboxes); n > maxReadFloors {
		t.Fatalf("%d inboxes kept; want at most %d", n, maxReadFloors)
	}
}

// TestAlreadyGone pins the server's answers that alreadyGone reads from
// their text (nats.go keeps no error code): a message deleted before, and
// a sequence past the stream's end, as a mark from a wiped server names.
func TestAlreadyGone(t *testing.T) {
	s := openInternal(t, Options{Namespace: "gone"})
	ctx := t.Context()
	ack, err := s.js.Publish(ctx, s.inboxSubject("crew", "bob")+".m1", []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.mail.DeleteMsg(ctx, ack.Sequence); err != nil {
		t.Fatal(err)
	}
	for _, seq := range []uint64{ack.Sequence, ack.Sequence + 1000} {
		err := s.mail.DeleteMsg(ctx, seq)
		if err == nil || !alreadyGone(err) {
			t.Errorf("DeleteMsg(%d) = %v; want an error alreadyGone recognises", seq, err)
		}
	}
	if alreadyGone(context.DeadlineExceeded) {
		t.Error("alreadyGone(a timeout) = true")
	}
}
