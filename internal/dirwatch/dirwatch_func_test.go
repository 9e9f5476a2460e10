package dirwatch

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSubscribeFunc: fn is called for a matching change, not for another
// name, and no more once cancelled.
func TestSubscribeFunc(t *testing.T) {
	w, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	dir := t.TempDir()
	called := make(chan struct{}, 16)
	cancel, err := w.SubscribeFunc(dir, func(n string) bool { return n == "a.json" }, func() {
		select {
		case called <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "b.json"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "a.json"), []byte("x"), 0o644)
	select {
	case <-called:
	case <-time.After(10 * time.Second):
		t.Fatal("fn not called within 10 s of a change to a.json")
	}
	cancel()
	for len(called) > 0 {
		<-called
	}
	// A witness subscribed after the cancel sees the next changes; once
	// it has seen a second one, the first has been dispatched to every
	// subscription (events are handled in order).
	witness := make(chan struct{}, 16)
	stop, err := w.SubscribeFunc(dir, func(n string) bool { return n == "a.json" }, func() { witness <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for i := range 2 {
		os.WriteFile(filepath.Join(dir, "a.json"), []byte{'y', byte('0' + i)}, 0o644)
		select {
		case <-witness:
		case <-time.After(10 * time.Second):
			t.Fatal("the witness saw no change to a.json within 10 s")
		}
	}
	if len(called) > 0 {
		t.Error("fn called after cancel")
	}
}
