package nats

import "testing"

// TestReadFloorsGeneration: a floor found by a read that began before the
// floors were forgotten is not recorded; floors only rise; past
// maxReadFloors inboxes they are forgotten, not grown.
func TestReadFloorsGeneration(t *testing.T) {
	var f readFloors
	_, gen := f.get("a")
	f.raise("a", 5, gen)
	if got, _ := f.get("a"); got != 5 {
		t.Fatalf("floor = %d; want 5", got)
	}
	f.raise("a", 3, gen)
	if got, _ := f.get("a"); got != 5 {
		t.Fatalf("floor lowered to %d; want 5 kept", got)
	}
	_, old := f.get("b")
	f.reset()
	f.raise("b", 7, old)
	if got, _ := f.get("b"); got != 0 {
		t.Fatalf("floor of a read begun before the reset = %d; want 0", got)
	}
	if got, _ := f.get("a"); got != 0 {
		t.Fatalf("floor after reset = %d; want 0", got)
	}
	_, gen = f.get("x")
	for i := range maxReadFloors + 1 {
		f.raise(string(rune(i)), 1, gen)
	}
	if n := len(f.floors); n > maxReadFloors {
		t.Fatalf("%d floors kept; want at most %d", n, maxReadFloors)
	}
}
