package anthropic

import (
	"maps"
	"slices"
	"strings"
)

// models holds the context windows of the models this package defaults
// to or is commonly pointed at. Their prices are in the one price list,
// budget.DefaultPrices.
var models = map[string]int{
	"claude-sonnet-5-5": 1_000_000,
	"claude-opus-5-5":   1_000_000,
	"claude-haiku-5-5":  1_000_000,
	"claude-sonnet-5":   1_000_000,
	"claude-opus-5":     1_000_000,
	"claude-sonnet-4-6": 200_000,
	"claude-haiku-4-5":  200_000,
}

// Models returns the ids of the models the package knows (DefaultModel
// among them), sorted.
func Models() []string {
	return slices.Sorted(maps.Keys(models))
}

// lookup finds model in the table, ignoring a "[1m]" suffix and a
// "-YYYYMMDD" snapshot date.
func lookup(model string) (window int, ok bool) {
	model = strings.TrimSuffix(model, "[1m]")
	if w, ok := models[model]; ok {
		return w, true
	}
	if i := strings.LastIndexByte(model, '-'); i > 0 && len(model)-i-1 == 8 && allDigits(model[i+1:]) {
		w, ok := models[model[:i]]
		return w, ok
	}
	return 0, false
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// contextWindow returns model's context window, or 0 when unknown.
func contextWindow(model string) int {
	w, _ := lookup(model)
	return w
}

// legacyThinking lists the model id prefixes that take a thinking budget
// (thinking type "enabled"). Newer models think adaptively and answer a
// budget with 400.
var legacyThinking = []string{
	"claude-3",
	"claude-haiku-4-5", "claude-sonnet-4-5", "claude-opus-4-5",
	"claude-sonnet-4-0", "claude-sonnet-4-2", // claude-sonnet-4-20250514
	"claude-opus-4-0", "claude-opus-4-1", "claude-opus-4-2",
}

// adaptiveThinking reports whether model thinks adaptively; unknown
// models are assumed current.
func adaptiveThinking(model string) bool {
	for _, p := range legacyThinking {
		if strings.HasPrefix(model, p) {
			return false
		}
	}
	return true
}
