package dashboard

import (
	"fmt"
)

// Spend is what one agent of a session has spent.
type Spend struct {
	Tokens int64
	USD    float64
	// Priced is false when a model it used has no price: USD then
	// counts only the priced calls.
	Priced bool
}

// String is how the page shows s: "12,345 tokens · $0.0421".
func (s Spend) String() string {
	out := fmt.Sprintf("%s tokens", grouped(s.Tokens))
	if s.Priced || s.USD > 0 {
		out += fmt.Sprintf(" · $%.4f", s.USD)
		if !s.Priced {
			out += "+"
		}
	}
	return out
}

func total(m map[string]Spend) Spend {
	t := Spend{Priced: true}
	for _, s := range m {
		t.Tokens += s.Tokens
		t.USD += s.USD
		t.Priced = t.Priced && s.Priced
	}
	return t
}

// spending returns the agents' spending of session, nil when unknown.
func (s *Server) spending(session string) map[string]Spend {
	if s.cfg.Spending == nil || session == "" {
		return nil
	}
	m, ok := s.cfg.Spending(session)
	if !ok {
		return nil
	}
	return m
}

func grouped(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
