package nats

import "testing"

// TestReadFloorsGeneration: what a read that began before the floors were
// forgotten found is not kept; floors only rise; the messages a read
// returned are found by id until the next read of the inbox or a reset;
// past maxReadFloors inboxes everything is forgotten, not grown.
func TestReadFloorsGeneration(t *testing.T) {
	var f readFloors
	_, gen := f.get("a")
	f.record("a", 5, []idSeq{{"m1", 6}, {"m2", 9}}, gen)
	if got, _ := f.get("a"); got != 5 {
		t.Fatalf("floor = %d; want 5", got)
	}
	if seq, ok := f.seq("a", "m2"); !ok || seq != 9 {
		t.Fatalf("seq(a, m2) = %d, %v; want 9, true", seq, ok)
	}
	if _, ok := f.seq("b", "m2"); ok {
		t.Fatal("seq(b, m2) found a message of another inbox")
	}
	f.record("a", 3, []idSeq{{"m3", 10}}, gen)
	if got, _ := f.get("a"); got != 5 {
		t.Fatalf("floor lowered to %d; want 5 kept", got)
	}
	if _, ok := f.seq("a", "m1"); ok {
		t.Fatal("seq(a, m1) still found after a read that did not return it")
	}
	_, old := f.get("b")
	f.reset()
	f.record("b", 7, []idSeq{{"m4", 11}}, old)
	if got, _ := f.get("b"); got != 0 {
		t.Fatalf("floor of a read begun before the reset = %d; want 0", got)
	}
	if _, ok := f.seq("b", "m4"); ok {
		t.Fatal("a read begun before the reset left its messages")
	}
	if got, _ := f.get("a"); got != 0 {
		t.Fatalf("floor after reset = %d; want 0", got)
	}
	if _, ok := f.seq("a", "m3"); ok {
		t.Fatal("seq(a, m3) found after the reset")
	}
	_, gen = f.get("x")
	for i := range maxReadFloors + 1 {
		f.record(string(rune(i)), 1, nil, gen)
	}
	if n := len(f.inboxes); n > maxReadFloors {
		t.Fatalf("%d inboxes kept; want at most %d", n, maxReadFloors)
	}
}
