package anthropic

import (
	"slices"
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

// The default model is one the package knows (its window; its price is
// in budget.DefaultPrices, tested in cli/agentflags).
func TestModelsHaveDefault(t *testing.T) {
	if !slices.Contains(Models(), DefaultModel) {
		t.Errorf("Models() = %q lacks DefaultModel %s", Models(), DefaultModel)
	}
}
