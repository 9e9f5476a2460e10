package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPercentile(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(i + 1)
	}
	tests := []struct {
		name   string
		sorted []float64
		p      float64
		want   float64
	}{
		{"empty", nil, 50, 0},
		{"one", []float64{7}, 99, 7},
		{"median of 4 is the 2nd", []float64{1, 2, 3, 4}, 50, 2},
		{"p99 of 100 is the 99th", hundred, 99, 99},
		{"p90 of 100 is the 90th", hundred, 90, 90},
		{"p100 is the max", hundred, 100, 100},
		{"p99 of 10 is the max", hundred[:10], 99, 10},
		{"p1 of 100 is the min", hundred, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("Percentile(%v, %v) = %v; want %v", tt.sorted, tt.p, got, tt.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	in := []float64{5, 1, 4, 2, 3}
	got := Summarize(in)
	want := Summary{N: 5, Min: 1, P50: 3, P90: 5, P99: 5, Max: 5}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Summarize(%v) mismatch (-want +got):\n%s", in, diff)
	}
	if in[0] != 5 {
		t.Errorf("Summarize sorted its input: %v", in)
	}
	if got := Summarize(nil); got != (Summary{}) {
		t.Errorf("Summarize(nil) = %+v; want the zero Summary", got)
	}
}
