package anthropic

import (
	"strings"

	"github.com/troupe-dev/troupe/llm"
)

// price is a list price in USD per million tokens. CacheWrite is the
// five-minute cache write, the only one this package asks for.
type price struct {
	Input, Output, CacheRead, CacheWrite float64
}

// modelInfo is what the package knows of a model.
type modelInfo struct {
	window int
	price  price
	// long, when set, is the price of a request whose prompt (input, cache
	// reads and cache writes) exceeds longAbove tokens.
	long      *price
	longAbove int64
}

// models holds the models this package defaults to or is commonly pointed
// at. Prices are Anthropic's list prices (platform.claude.com pricing, as
// of late 2026) for the Claude API, without batch or regional discounts.
var models = map[string]modelInfo{
	"claude-sonnet-5-5": {window: 1_000_000, price: price{2, 10, 0.10, 2.50}},
	"claude-opus-5-5":   {window: 1_000_000, price: price{4, 20, 0.20, 5}},
	"claude-haiku-5-5": {window: 1_000_000, price: price{0.10, 0.50, 0.01, 0.125},
		long: &price{0.50, 2.50, 0.05, 0.625}, longAbove: 100_000},
	"claude-sonnet-5":   {window: 1_000_000, price: price{2, 10, 0.20, 2.50}},
	"claude-opus-5":     {window: 1_000_000, price: price{5, 25, 0.50, 6.25}},
	"claude-sonnet-4-6": {window: 200_000, price: price{3, 15, 0.30, 3.75}},
	"claude-haiku-4-5":  {window: 200_000, price: price{1, 5, 0.10, 1.25}},
}

// lookup finds model in the table, ignoring a "[1m]" suffix and a
// "-YYYYMMDD" snapshot date.
func lookup(model string) (modelInfo, bool) {
	model = strings.TrimSuffix(model, "[1m]")
	if mi, ok := models[model]; ok {
		return mi, true
	}
	if i := strings.LastIndexByte(model, '-'); i > 0 && len(model)-i-1 == 8 && allDigits(model[i+1:]) {
		mi, ok := models[model[:i]]
		return mi, ok
	}
	return modelInfo{}, false
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
	mi, _ := lookup(model)
	return mi.window
}

// Cost returns what usage u of model costs in USD at list price, and
// whether the model's price is known. Cache writes are priced as
// five-minute writes, which is what this package requests.
func Cost(model string, u llm.Usage) (usd float64, known bool) {
	mi, ok := lookup(model)
	if !ok {
		return 0, false
	}
	p := mi.price
	if mi.long != nil && u.TotalInput() > mi.longAbove {
		p = *mi.long
	}
	usd = float64(u.InputTokens)*p.Input +
		float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*p.CacheRead +
		float64(u.CacheWriteTokens)*p.CacheWrite
	return usd / 1e6, true
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
