package llm

import "errors"

// Block types of a provider's server-side tools: the model calls them
// and the provider runs them within the same response.
const (
	BlockServerToolUse   BlockType = "server_tool_use"
	BlockWebSearchResult BlockType = "web_search_tool_result"
)

// ErrNoWebSearch means a request asked for the provider's web search
// and the provider has none.
var ErrNoWebSearch = errors.New("llm: this provider has no server-side web search")

// WebSearch configures the provider's server-side web search for one
// request (on Anthropic, the Messages API's web_search_20250305 tool).
// AllowedDomains and BlockedDomains cannot both be set.
type WebSearch struct {
	MaxUses        int // searches the model may run in the request; 0 means the provider's default
	AllowedDomains []string
	BlockedDomains []string
}

// SearchResult is one hit of a web search.
type SearchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	PageAge string `json:"page_age,omitempty"`
}

// SearchResults returns the hits of the web_search_tool_result blocks of
// m, in order, and the error codes of those that failed.
func (m Message) SearchResults() (hits []SearchResult, errs []string) {
	for _, b := range m.Content {
		if b.Type != BlockWebSearchResult {
			continue
		}
		if b.IsError {
			errs = append(errs, b.Text)
			continue
		}
		hits = append(hits, b.Results...)
	}
	return hits, errs
}
