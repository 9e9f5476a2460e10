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
	time.Sleep(50 * time.Millisecond)
	for len(called) > 0 {
		<-called
	}
	os.WriteFile(filepath.Join(dir, "a.json"), []byte("y"), 0o644)
	time.Sleep(200 * time.Millisecond)
	if len(called) > 0 {
		t.Error("fn called after cancel")
	}
}
