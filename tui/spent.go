package tui

import (
	"fmt"
)

// Spent is what a session's agents have spent, and its limits (zero: no
// limit), for the footer.
type Spent struct {
	Tokens int64
	USD    float64
	// Priced is false when some model used has no price: USD then
	// counts only the priced ones.
	Priced      bool
	LimitUSD    float64
	LimitTokens int64
}

// String is the footer's words: "12.3k tokens · $0.042 of $1.00".
func (s Spent) String() string {
	out := tokens(s.Tokens) + " tokens"
	if s.LimitTokens > 0 {
		out += " of " + tokens(s.LimitTokens)
	}
	if s.Priced || s.USD > 0 || s.LimitUSD > 0 {
		out += " · " + usd(s.USD)
		if !s.Priced {
			out += "+"
		}
		if s.LimitUSD > 0 {
			out += " of " + usd(s.LimitUSD)
		}
	}
	return out
}

func usd(v float64) string {
	if v < 1 {
		return fmt.Sprintf("$%.3f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}
