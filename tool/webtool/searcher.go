package webtool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/llm"
)

// ModelSearch searches with the provider's server-side web search: one
// request to Model offering only that search, whose result blocks give
// the hits and whose text the summary.
type ModelSearch struct {
	Model     llm.Model
	ModelName string // "" for the provider's default
	MaxUses   int    // searches per call; 0 means DefaultMaxUses
}

// DefaultMaxUses is how many searches one WebSearch call may run on the
// provider.
const DefaultMaxUses = 8

// Search implements Searcher.
func (m ModelSearch) Search(ctx context.Context, q Query) (Found, error) {
	uses := m.MaxUses
	if uses <= 0 {
		uses = DefaultMaxUses
	}
	resp, err := llm.Complete(ctx, m.Model, llm.Request{Model: m.ModelName,
		System:    "You are an assistant performing a web search for another AI agent. Search, then summarize what the results say about the query in a few sentences.",
		Messages:  []llm.Message{llm.UserText("Perform a web search for the query: " + q.Text)},
		MaxTokens: 4096, NoCache: true,
		WebSearch: &llm.WebSearch{MaxUses: uses, AllowedDomains: q.AllowedDomains, BlockedDomains: q.BlockedDomains}})
	if err != nil {
		return Found{}, err
	}
	hits, errs := resp.Message.SearchResults()
	if len(hits) == 0 && len(errs) > 0 {
		return Found{}, fmt.Errorf("the provider's search failed: %s", strings.Join(errs, ", "))
	}
	return Found{Hits: hits, Summary: resp.Message.Text()}, nil
}

// SearXNG searches a SearXNG-style JSON endpoint: GET URL?q=QUERY&format=json
// answering {"results": [{"title", "url", "content"}]}.
type SearXNG struct {
	URL    string
	Client *http.Client // nil: a client with a 30-second timeout
}

// maxSearchBody caps a search endpoint's answer.
const maxSearchBody = 4 << 20

// Search implements Searcher.
func (s SearXNG) Search(ctx context.Context, q Query) (Found, error) {
	u, err := url.Parse(s.URL)
	if err != nil {
		return Found{}, fmt.Errorf("search endpoint %q: %w", s.URL, err)
	}
	v := u.Query()
	text := q.Text
	if len(q.AllowedDomains) == 1 {
		text += " site:" + q.AllowedDomains[0] // the engine narrows; Filter decides
	}
	v.Set("q", text)
	v.Set("format", "json")
	u.RawQuery = v.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Found{}, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	c := s.Client
	if c == nil {
		c = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		return Found{}, fmt.Errorf("search endpoint: %w", unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSearchBody+1))
	if err != nil {
		return Found{}, fmt.Errorf("search endpoint: read: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return Found{}, fmt.Errorf("search endpoint %s answered HTTP %s (is its JSON format enabled?)", u.Host, resp.Status)
	}
	if len(body) > maxSearchBody {
		return Found{}, fmt.Errorf("search endpoint %s answered more than %d bytes", u.Host, maxSearchBody)
	}
	hits, err := ParseSearXNG(body)
	if err != nil {
		return Found{}, fmt.Errorf("search endpoint %s: %w", u.Host, err)
	}
	return Found{Hits: hits}, nil
}

// ParseSearXNG decodes a SearXNG JSON answer into hits, skipping
// results without an http(s) URL. It fails on a body that is not a JSON
// object with a results array.
func ParseSearXNG(body []byte) ([]llm.SearchResult, error) {
	var doc struct {
		Results *[]struct {
			Title         string `json:"title"`
			URL           string `json:"url"`
			PublishedDate string `json:"publishedDate"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("answer is not SearXNG JSON: %w", err)
	}
	if doc.Results == nil {
		return nil, errors.New(`answer has no "results" array`)
	}
	var out []llm.SearchResult
	for _, r := range *doc.Results {
		if hostOf(r.URL) == "" {
			continue
		}
		out = append(out, llm.SearchResult{Title: strings.TrimSpace(r.Title), URL: r.URL, PageAge: r.PublishedDate})
	}
	return out, nil
}

// hostOf returns the lower-cased host of an http(s) URL, or "".
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" {
		return ""
	}
	return strings.ToLower(u.Hostname())
}
