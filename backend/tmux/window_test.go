package tmux_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/backend/backendtest"
	"github.com/troupe-dev/troupe/backend/tmux"
)

// windowOf returns "session:window" of pane p.
func (s *server) windowOf(t *testing.T, p string) string {
	t.Helper()
	return s.must("display-message", "-p", "-t", p, "#{session_name}:#{window_name}")
}

// A teammate that asks for a window of its own gets one, inside tmux in
// the leader's session; a split teammate after it still splits the
// leader's window, never the window teammate's.
func TestInsideWindowOfItsOwn(t *testing.T) {
	s := newServer(t)
	b, leader := s.inside(t)
	leaderWin := s.windowOf(t, leader)

	tm := backendtest.NewTeammate(t, "solo@team")
	tm.Spec.Name, tm.Spec.Window = "solo", true
	h := spawn(t, b, tm)
	tm.WaitStarted(t, h)
	if got, want := s.windowOf(t, h.PaneID()), "lead:teammate-solo"; got != want {
		t.Errorf("window teammate is in %q; want %q", got, want)
	}
	if h.WindowName() != "teammate-solo" {
		t.Errorf("WindowName() = %q; want teammate-solo", h.WindowName())
	}
	// The leader's window was not split.
	if n := strings.Count(s.must("list-panes", "-t", leader), "\n") + 1; n != 1 {
		t.Errorf("leader's window has %d panes after a window spawn; want 1", n)
	}

	tm2 := backendtest.NewTeammate(t, "pair@team")
	h2 := spawn(t, b, tm2)
	tm2.WaitStarted(t, h2)
	if got := s.windowOf(t, h2.PaneID()); got != leaderWin {
		t.Errorf("split teammate is in %q; want the leader's window %q", got, leaderWin)
	}
	if h2.WindowName() != "" {
		t.Errorf("split teammate's WindowName() = %q; want empty", h2.WindowName())
	}

	// Hide the split one: it leaves the leader's window and keeps running.
	if err := b.Hide(t.Context(), h2.PaneID(), "pair"); err != nil {
		t.Fatalf("Hide = %v", err)
	}
	if got, want := s.windowOf(t, h2.PaneID()), "lead:hidden-pair"; got != want {
		t.Errorf("hidden teammate is in %q; want %q", got, want)
	}
	if err := b.Hide(t.Context(), h2.PaneID(), "pair"); !errors.Is(err, tmux.ErrNotShown) {
		t.Errorf("Hide of a hidden pane = %v; want ErrNotShown", err)
	}
	select {
	case <-h2.Done():
		t.Fatalf("hidden teammate ended: %v", h2.Err())
	default:
	}
	// Show it: back beside the leader.
	if err := b.Show(t.Context(), h2.PaneID()); err != nil {
		t.Fatalf("Show = %v", err)
	}
	if got := s.windowOf(t, h2.PaneID()); got != leaderWin {
		t.Errorf("shown teammate is in %q; want the leader's window %q", got, leaderWin)
	}
	if err := b.Show(t.Context(), h2.PaneID()); err == nil {
		t.Error("Show of a shown pane = nil; want an error")
	}
	if err := b.Hide(t.Context(), leader, "lead"); err == nil {
		t.Error("Hide of the leader's pane = nil; want an error (not troupe's)")
	}
	// The window teammate can be brought into the leader's window too.
	if err := b.Show(t.Context(), h.PaneID()); err != nil {
		t.Fatalf("Show of the window teammate = %v", err)
	}
	if got := s.windowOf(t, h.PaneID()); got != leaderWin {
		t.Errorf("window teammate after Show is in %q; want %q", got, leaderWin)
	}
	if err := b.Close(t.Context()); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if got := s.panes(); len(got) != 1 || got[0] != leader {
		t.Errorf("panes after Close = %v; want only the leader %s", got, leader)
	}
}

// Outside tmux the first teammate, in a window of its own, takes the new
// session's window; a split teammate after it makes the shared window
// again, and hiding the shared window's only teammate renames its window.
func TestOutsideWindowOfItsOwn(t *testing.T) {
	s := newServer(t)
	b := s.outside(t)
	tm := backendtest.NewTeammate(t, "solo@team")
	tm.Spec.Name, tm.Spec.Window = "solo", true
	h := spawn(t, b, tm)
	tm.WaitStarted(t, h)
	if got, want := s.windowOf(t, h.PaneID()), "troupe-swarm:teammate-solo"; got != want {
		t.Errorf("window teammate is in %q; want %q", got, want)
	}
	tm2 := backendtest.NewTeammate(t, "pair@team")
	tm2.Spec.Name = "pair"
	h2 := spawn(t, b, tm2)
	tm2.WaitStarted(t, h2)
	if got, want := s.windowOf(t, h2.PaneID()), "troupe-swarm:swarm-view"; got != want {
		t.Errorf("split teammate is in %q; want %q", got, want)
	}
	if got := len(s.panes()); got != 2 {
		t.Errorf("%d panes; want 2 (no placeholder left behind)", got)
	}
	if err := b.Hide(t.Context(), h2.PaneID(), "pair"); err != nil {
		t.Fatalf("Hide = %v", err)
	}
	if got, want := s.windowOf(t, h2.PaneID()), "troupe-swarm:hidden-pair"; got != want {
		t.Errorf("hidden teammate is in %q; want %q", got, want)
	}
	if err := b.Show(t.Context(), h2.PaneID()); err != nil {
		t.Fatalf("Show = %v", err)
	}
	if got, want := s.windowOf(t, h2.PaneID()), "troupe-swarm:swarm-view"; got != want {
		t.Errorf("shown teammate is in %q; want %q", got, want)
	}
	// A third, split, joins the shared window.
	tm3 := backendtest.NewTeammate(t, "third@team")
	h3 := spawn(t, b, tm3)
	tm3.WaitStarted(t, h3)
	if got, want := s.windowOf(t, h3.PaneID()), "troupe-swarm:swarm-view"; got != want {
		t.Errorf("third teammate is in %q; want %q", got, want)
	}
	if err := b.Close(t.Context()); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if out, err := s.tmux("list-sessions"); err == nil {
		t.Errorf("server still runs after Close: %s", out)
	}
}
