package backend

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

type paneHandle struct{ name string }

func TestPanes(t *testing.T) {
	var p Panes[paneHandle]
	a, a2, b := &paneHandle{"a"}, &paneHandle{"a again"}, &paneHandle{"b"}

	if err := p.Reserve("a@t", a); err != nil {
		t.Fatalf("Reserve = %v", err)
	}
	if err := p.Reserve("a@t", a2); !errors.Is(err, ErrRunning) {
		t.Fatalf("Reserve of a starting id = %v, want ErrRunning", err)
	}
	p.Own("%1")
	if err := p.Launched("a@t", "%1", a, nil); err != nil {
		t.Fatalf("Launched = %v", err)
	}
	if err := p.Reserve("a@t", a2); !errors.Is(err, ErrRunning) {
		t.Fatalf("Reserve of a running id = %v, want ErrRunning", err)
	}

	// A failed launch frees the id and returns its error.
	bad := errors.New("no room")
	if err := p.Reserve("b@t", b); err != nil {
		t.Fatal(err)
	}
	if err := p.Launched("b@t", "", b, bad); err != bad {
		t.Fatalf("Launched of a failed spawn = %v, want %v", err, bad)
	}
	if err := p.Reserve("b@t", b); err != nil {
		t.Fatalf("Reserve after a failed launch = %v, want nil", err)
	}
	p.Own("%2")
	if err := p.Launched("b@t", "%2", b, nil); err != nil {
		t.Fatal(err)
	}
	if got := p.Owned(); !slices.Equal(got, []string{"%1", "%2"}) {
		t.Fatalf("Owned = %v", got)
	}

	// Judge sees only launched teammates of owned panes.
	watched := p.Watched()
	slices.Sort(watched)
	if !slices.Equal(watched, []string{"%1", "%2"}) {
		t.Fatalf("Watched = %v", watched)
	}
	if !p.Disown("%2") || p.Disown("%2") {
		t.Fatal("Disown: want true once, then false")
	}
	var judged []string
	p.Judge(append(watched, "%9"), func(pane string, h *paneHandle) { judged = append(judged, pane+"="+h.name) })
	if !slices.Equal(judged, []string{"%1=a"}) {
		t.Fatalf("judged %v, want only %%1=a", judged)
	}

	// Finish hands the teammate out once and frees its id.
	if h := p.Finish("%1"); h != a {
		t.Fatalf("Finish = %v, want a", h)
	}
	if h := p.Finish("%1"); h != nil {
		t.Fatalf("second Finish = %v, want nil", h)
	}
	if err := p.Reserve("a@t", a2); err != nil {
		t.Fatalf("Reserve after Finish = %v, want nil", err)
	}

	// Close waits for the Spawn under way (a2), whose launch then fails
	// with ErrClosed, and returns the owned panes.
	closed := make(chan []string)
	go func() {
		owned, err := p.Close(t.Context())
		if err != nil {
			t.Errorf("Close = %v", err)
		}
		closed <- owned
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := &paneHandle{"c"}
		err := p.Reserve("c@t", c)
		if errors.Is(err, ErrClosed) {
			break
		}
		if err != nil {
			t.Fatalf("Reserve(c@t) = %v, want nil or ErrClosed", err)
		}
		p.Launched("c@t", "", c, errors.New("probe")) // Close not there yet: take the probe back
		if time.Now().After(deadline) {
			t.Fatal("Reserve does not fail with ErrClosed 10s after Close began")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case <-closed:
		t.Fatal("Close returned while a Spawn was under way")
	default:
	}
	p.Own("%3")
	if err := p.Launched("a@t", "%3", a2, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Launched during Close = %v, want ErrClosed", err)
	}
	if owned := <-closed; !slices.Equal(owned, []string{"%1", "%3"}) {
		t.Fatalf("Close returned %v, want [%%1 %%3] (the panes still owned)", owned)
	}
}

func TestPanesCloseGivesUp(t *testing.T) {
	var p Panes[paneHandle]
	if err := p.Reserve("a@t", &paneHandle{"a"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(t.Context())
	gaveUp := errors.New("gave up")
	cancel(gaveUp)
	if _, err := p.Close(ctx); err != gaveUp {
		t.Fatalf("Close with a Spawn under way and an ended ctx = %v, want %v", err, gaveUp)
	}
}
