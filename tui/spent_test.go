package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/troupe-dev/troupe/session"
)

func TestSpentString(t *testing.T) {
	tests := []struct {
		name string
		s    Spent
		want string
	}{
		{"tokens only", Spent{Tokens: 1500}, "1.5k tokens"},
		{"priced", Spent{Tokens: 900, USD: 0.0421, Priced: true}, "900 tokens · $0.042"},
		{"limits", Spent{Tokens: 12_000, USD: 1.5, Priced: true, LimitUSD: 2, LimitTokens: 50_000}, "12.0k tokens of 50.0k · $1.50 of $2.00"},
		{"partly unpriced", Spent{Tokens: 10, USD: 0.5}, "10 tokens · $0.500+"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.String(); got != tt.want {
				t.Errorf("String() = %q; want %q", got, tt.want)
			}
		})
	}
}

// The footer shows the session's spending, read on each session event,
// instead of the lead's own.
func TestFooterShowsSessionSpending(t *testing.T) {
	spent := Spent{Tokens: 2000, USD: 0.25, Priced: true, LimitUSD: 1}
	m := newModel(context.Background(), &recorder{}, Options{NoColor: true, Now: func() time.Time { return t0 },
		Spent: func() Spent { return spent }})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.event(session.Event{Time: t0, Kind: session.KindNotice, Text: "hello"})
	if got := strings.Join(m.footer(), "\n"); !strings.Contains(got, "2.0k tokens · $0.250 of $1.00") {
		t.Errorf("footer = %q; want the session's spending with its limit", got)
	}
	spent.USD = 0.5 // a teammate spent meanwhile: seen at the next event
	m.event(session.Event{Time: t0, Kind: session.KindNotice, Text: "again"})
	if got := strings.Join(m.footer(), "\n"); !strings.Contains(got, "$0.500 of $1.00") {
		t.Errorf("footer = %q; want the new total", got)
	}
}
