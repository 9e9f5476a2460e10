package anthropic

import (
	"testing"

	"github.com/troupe-dev/troupe/llm"
)

func TestInfo(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want llm.Info
	}{
		{"default", Options{APIKey: "k"}, llm.Info{Provider: "anthropic", Model: DefaultModel, ContextWindow: 1_000_000}},
		{"unknown model", Options{APIKey: "k", Model: "claude-next"}, llm.Info{Provider: "anthropic", Model: "claude-next", ContextWindow: DefaultContextWindow}},
		{"dated snapshot", Options{APIKey: "k", Model: "claude-haiku-4-5-20251001"}, llm.Info{Provider: "anthropic", Model: "claude-haiku-4-5-20251001", ContextWindow: 200_000}},
		{"override", Options{APIKey: "k", ContextWindow: 5}, llm.Info{Provider: "anthropic", Model: DefaultModel, ContextWindow: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Info(); got != tt.want {
				t.Errorf("Info() = %+v; want %+v", got, tt.want)
			}
		})
	}
}

func TestCost(t *testing.T) {
	u := llm.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000, CacheReadTokens: 1_000_000, CacheWriteTokens: 1_000_000}
	tests := []struct {
		model string
		u     llm.Usage
		want  float64
		known bool
	}{
		{"claude-sonnet-5-5", u, 2 + 10 + 0.10 + 2.50, true},
		{"claude-opus-5-5", u, 4 + 20 + 0.20 + 5, true},
		{"claude-haiku-4-5-20251001", u, 1 + 5 + 0.10 + 1.25, true},
		{"claude-sonnet-5-5[1m]", llm.Usage{OutputTokens: 1000}, 0.01, true},
		{"claude-haiku-5-5", llm.Usage{InputTokens: 50_000, OutputTokens: 1000}, 0.005 + 0.0005, true},
		{"claude-haiku-5-5", llm.Usage{InputTokens: 200_000, OutputTokens: 1000}, 0.1 + 0.0025, true},
		{"gpt-6", u, 0, false},
	}
	for _, tt := range tests {
		got, known := Cost(tt.model, tt.u)
		if known != tt.known || !approx(got, tt.want) {
			t.Errorf("Cost(%q, %+v) = %v, %v; want %v, %v", tt.model, tt.u, got, known, tt.want, tt.known)
		}
	}
	if _, known := Cost(DefaultModel, llm.Usage{}); !known {
		t.Errorf("Cost(DefaultModel) unknown; want the default model priced")
	}
}

func approx(a, b float64) bool {
	d := a - b
	return d < 1e-9 && d > -1e-9
}
