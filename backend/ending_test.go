package backend

import (
	"errors"
	"sync"
	"testing"
)

func TestEnding(t *testing.T) {
	var e Ending
	select {
	case <-e.Done():
		t.Fatal("Done closed before Finish")
	default:
	}
	first := errors.New("first")
	var wg sync.WaitGroup
	wg.Go(func() { <-e.Done() })
	e.Finish(first)
	e.Finish(errors.New("second"))
	wg.Wait()
	if e.Err() != first {
		t.Errorf("Err = %v, want the first reason", e.Err())
	}
}
