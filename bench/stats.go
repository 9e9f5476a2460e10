package bench

import (
	"math"
	"slices"
	"time"
)

// Summary describes a sample of durations in milliseconds. Percentiles use
// the nearest-rank method on the complete, sorted sample (no estimation), as
// the peer's scripts do: P99 is the smallest sample that at least 99 % of the
// samples do not exceed.
type Summary struct {
	N   int     `json:"n"`
	Min float64 `json:"min_ms"`
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// Summarize returns the summary of ms (which it does not modify). An empty
// sample gives the zero Summary.
func Summarize(ms []float64) Summary {
	if len(ms) == 0 {
		return Summary{}
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	return Summary{
		N:   len(s),
		Min: s[0],
		P50: Percentile(s, 50),
		P90: Percentile(s, 90),
		P99: Percentile(s, 99),
		Max: s[len(s)-1],
	}
}

// Percentile returns the p-th percentile (0 < p <= 100) of sorted by the
// nearest-rank method, or 0 for an empty sample.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(n))) - 1
	return sorted[min(max(i, 0), n-1)]
}

// ms converts a duration to milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// spanMS returns the milliseconds between two Unix-nanosecond times.
func spanMS(from, to int64) float64 { return float64(to-from) / 1e6 }
