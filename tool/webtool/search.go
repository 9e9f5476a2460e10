package webtool

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// Query is one web search.
type Query struct {
	Text string
	// AllowedDomains, when set, keep only hits on these domains (or
	// their subdomains); BlockedDomains drop hits on them. At most one
	// is set.
	AllowedDomains, BlockedDomains []string
}

// Found is a search's answer: its hits, and what the search engine said
// of them (the provider model's summary; may be empty).
type Found struct {
	Hits    []llm.SearchResult
	Summary string
}

// Searcher runs web searches. Implementations are safe for concurrent
// use; an error is shown to the model.
type Searcher interface {
	Search(ctx context.Context, q Query) (Found, error)
}

// Search is the WebSearch tool over a Searcher.
type Search struct {
	searcher Searcher
}

var _ tool.Tool = (*Search)(nil)

// NewSearch returns the WebSearch tool searching with s.
func NewSearch(s Searcher) *Search { return &Search{searcher: s} }

//go:embed websearch.md
var searchDescription string

const searchSchema = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 2, "description": "The search query to use"},
    "allowed_domains": {"type": "array", "items": {"type": "string"}, "description": "Only include search results from these domains"},
    "blocked_domains": {"type": "array", "items": {"type": "string"}, "description": "Never include search results from these domains"}
  },
  "required": ["query"],
  "additionalProperties": false
}`

// Spec implements tool.Tool.
func (*Search) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "WebSearch", Description: searchDescription, InputSchema: json.RawMessage(searchSchema)}
}

// ReadOnly implements tool.Tool.
func (*Search) ReadOnly(json.RawMessage) bool { return true }

// Run implements tool.Tool.
func (s *Search) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in struct {
		Query          string   `json:"query"`
		AllowedDomains []string `json:"allowed_domains"`
		BlockedDomains []string `json:"blocked_domains"`
	}
	if res, ok := tool.Decode("WebSearch", call.Input, &in); !ok {
		return res, nil
	}
	q := Query{Text: strings.TrimSpace(in.Query)}
	if len([]rune(q.Text)) < 2 {
		return tool.Errorf("WebSearch: query %q is too short: give at least 2 characters", in.Query), nil
	}
	var err error
	if q.AllowedDomains, err = domains("allowed_domains", in.AllowedDomains); err != nil {
		return tool.Errorf("WebSearch: %v", err), nil
	}
	if q.BlockedDomains, err = domains("blocked_domains", in.BlockedDomains); err != nil {
		return tool.Errorf("WebSearch: %v", err), nil
	}
	if len(q.AllowedDomains) > 0 && len(q.BlockedDomains) > 0 {
		return tool.Errorf("WebSearch: give allowed_domains or blocked_domains, not both"), nil
	}
	found, err := s.searcher.Search(ctx, q)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, context.Cause(ctx)
		}
		return tool.Errorf("WebSearch: %q: %v", q.Text, err), nil
	}
	found.Hits = Filter(found.Hits, q)
	return tool.Result{Content: format(q.Text, found)}, nil
}

// domains checks a domain list: bare host names, lower-cased.
func domains(field string, in []string) ([]string, error) {
	var out []string
	for i, d := range in {
		d = strings.ToLower(strings.TrimSpace(d))
		switch {
		case d == "":
			return nil, fmt.Errorf("%s[%d] is empty", field, i)
		case strings.ContainsAny(d, "/:?# "):
			return nil, fmt.Errorf("%s[%d] %q: give a bare domain such as example.com, without a scheme or a path", field, i, in[i])
		}
		out = append(out, d)
	}
	return out, nil
}

// Filter returns the hits q's domain lists let through, without
// duplicate URLs: a domain covers its subdomains.
func Filter(hits []llm.SearchResult, q Query) []llm.SearchResult {
	var out []llm.SearchResult
	seen := map[string]bool{}
	for _, h := range hits {
		host := hostOf(h.URL)
		if host == "" || seen[h.URL] {
			continue
		}
		if len(q.AllowedDomains) > 0 && !underAny(host, q.AllowedDomains) || underAny(host, q.BlockedDomains) {
			continue
		}
		seen[h.URL] = true
		out = append(out, h)
	}
	return out
}

func underAny(host string, domains []string) bool {
	return slices.ContainsFunc(domains, func(d string) bool { return host == d || strings.HasSuffix(host, "."+d) })
}

// format is the result the model reads: the hits as titles and URLs,
// the engine's summary, and the reminder to cite them.
func format(query string, f Found) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Web search results for query: %q\n\n", query)
	if len(f.Hits) == 0 {
		b.WriteString("No results.\n")
	} else {
		links := make([]map[string]string, len(f.Hits))
		for i, h := range f.Hits {
			links[i] = map[string]string{"title": h.Title, "url": h.URL}
		}
		j, _ := json.Marshal(links)
		fmt.Fprintf(&b, "Links: %s\n", j)
		for i, h := range f.Hits {
			fmt.Fprintf(&b, "%d. [%s](%s)\n", i+1, markdownText(h.Title), h.URL)
		}
	}
	if s := strings.TrimSpace(f.Summary); s != "" {
		b.WriteString("\n" + s + "\n")
	}
	if len(f.Hits) > 0 {
		b.WriteString("\nREMINDER: cite the sources you use from these results in your answer, as markdown links [title](url).")
	}
	return b.String()
}

// markdownText escapes what would end a link's text.
func markdownText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "untitled"
	}
	return strings.NewReplacer("[", `\[`, "]", `\]`).Replace(s)
}
