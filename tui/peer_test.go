package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/troupe-dev/troupe/peer"
	"github.com/troupe-dev/troupe/session"
)

// Another session's message is shown with its sender.
func TestPeerMessageShown(t *testing.T) {
	m := newModel(context.Background(), &recorder{}, Options{NoColor: true, Now: func() time.Time { return t0 }})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 24})
	m.event(session.Event{Time: t0, Kind: session.KindPeerMessage, Peer: &peer.Message{From: "alpha", Host: "h1", Session: "0123456789", Text: "please rebase"}})
	last := m.convo.entries[len(m.convo.entries)-1]
	if !strings.Contains(last.text, "from session alpha@h1 [01234567]: please rebase") {
		t.Fatalf("last entry = %q; want the sender and the text", last.text)
	}
}
