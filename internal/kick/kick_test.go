package kick

import (
	"sync"
	"testing"
)

func TestSignal(t *testing.T) {
	s := New()
	s.Kick()
	s.Kick() // coalesced, never blocks
	if _, ok := <-s.C(); !ok {
		t.Fatal("closed before Close")
	}
	select {
	case <-s.C():
		t.Fatal("two kicks gave two receives")
	default:
	}
	stops := 0
	s.OnClose(func() bool { stops++; return true })
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { s.Kick(); s.Close() })
	}
	wg.Wait()
	for range s.C() { // at most one buffered kick, then closed
	}
	if stops == 0 {
		t.Error("OnClose not called")
	}
}
