package webtool

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/troupe-dev/troupe/llm/anthropic"
	"github.com/troupe-dev/troupe/llm/llmtest"
	"github.com/troupe-dev/troupe/tool"
)

func search(t *testing.T, s *Search, input string) tool.Result {
	t.Helper()
	res, err := s.Run(t.Context(), tool.Call{ID: "s1", Name: "WebSearch", Input: json.RawMessage(input)})
	if err != nil {
		t.Fatalf("Run(%s): %v", input, err)
	}
	return res
}

// TestSearchOnAnthropic: the provider's web search, on the fake server's
// emulation, gives titles and URLs, filtered by the call's domains.
func TestSearchOnAnthropic(t *testing.T) {
	corpus := []llmtest.AnthropicSearchHit{
		{Title: "Go 1.26 release notes", URL: "https://go.dev/doc/go1.26"},
		{Title: "Blog [spam]", URL: "https://spam.example/go"},
	}
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicWebSearch(corpus, func(q string, hits []llmtest.AnthropicSearchHit) string {
		return fmt.Sprintf("Found %d pages.", len(hits))
	}))
	m, err := anthropic.New(anthropic.Options{APIKey: "k", BaseURL: srv.URL, Model: "claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	s := NewSearch(ModelSearch{Model: m})
	res := search(t, s, `{"query":"go 1.26"}`)
	for _, want := range []string{`Web search results for query: "go 1.26"`, `"url":"https://go.dev/doc/go1.26"`,
		"1. [Go 1.26 release notes](https://go.dev/doc/go1.26)", `2. [Blog \[spam\]](https://spam.example/go)`, "Found 2 pages.", "cite the sources"} {
		if !strings.Contains(res.Content, want) || res.IsError {
			t.Errorf("result lacks %q:\n%s", want, res.Content)
		}
	}
	req := srv.LastRequest()
	if got := textOfMsg(req.LastMessage()); !strings.Contains(got, "go 1.26") {
		t.Errorf("provider request = %q; want the query", got)
	}
	if ws, ok := req.WebSearchTool(); !ok || ws.MaxUses != DefaultMaxUses || len(req.Tools) != 1 {
		t.Errorf("provider tools = %+v; want only the web search with max_uses %d", req.Tools, DefaultMaxUses)
	}
	res = search(t, s, `{"query":"go 1.26","blocked_domains":["spam.example"]}`)
	if strings.Contains(res.Content, "spam.example") || !strings.Contains(res.Content, "go.dev") {
		t.Errorf("blocked_domains: %s", res.Content)
	}
	if ws, _ := srv.LastRequest().WebSearchTool(); len(ws.BlockedDomains) != 1 {
		t.Errorf("blocked_domains not passed to the provider: %+v", ws)
	}
}

// TestSearchOnSearXNG: a SearXNG-style endpoint's JSON gives the hits;
// the call's domain lists filter them.
func TestSearchOnSearXNG(t *testing.T) {
	var got atomic.Value
	engine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.URL.Query())
		if r.URL.Query().Get("format") != "json" {
			http.Error(w, "format", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"query":"x","results":[
			{"title":"Docs","url":"https://docs.example.org/a","content":"..."},
			{"title":"Other","url":"https://other.test/b"},
			{"title":"No scheme","url":"javascript:alert(1)"},
			{"title":"Docs again","url":"https://docs.example.org/a"}]}`)
	}))
	defer engine.Close()
	s := NewSearch(SearXNG{URL: engine.URL + "/search?language=en"})
	res := search(t, s, `{"query":"widgets"}`)
	if res.IsError || !strings.Contains(res.Content, "1. [Docs](https://docs.example.org/a)") || !strings.Contains(res.Content, "2. [Other](https://other.test/b)") ||
		strings.Contains(res.Content, "javascript") || strings.Count(res.Content, "docs.example.org/a") != 2 {
		t.Errorf("result:\n%s", res.Content)
	}
	q := got.Load().(interface{ Get(string) string })
	if q.Get("q") != "widgets" || q.Get("language") != "en" {
		t.Errorf("engine query q=%q language=%q", q.Get("q"), q.Get("language"))
	}
	res = search(t, s, `{"query":"widgets","allowed_domains":["example.org"]}`)
	if strings.Contains(res.Content, "other.test") || !strings.Contains(res.Content, "docs.example.org") {
		t.Errorf("allowed_domains:\n%s", res.Content)
	}
	if q := got.Load().(interface{ Get(string) string }); q.Get("q") != "widgets site:example.org" {
		t.Errorf("engine q = %q; want the site: narrowing", q.Get("q"))
	}
}

func TestSearchErrors(t *testing.T) {
	engine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer engine.Close()
	s := NewSearch(SearXNG{URL: engine.URL})
	tests := []struct{ input, want string }{
		{`{"query":"x"}`, "too short"},
		{`{"query":"xy","allowed_domains":["a.com"],"blocked_domains":["b.com"]}`, "not both"},
		{`{"query":"xy","allowed_domains":["https://a.com/x"]}`, "bare domain"},
		{`{"query":"xy","blocked_domains":[""]}`, "blocked_domains[0] is empty"},
		{`{"q":"xy"}`, `unknown field "q"`},
		{`{"query":"xy"}`, "answered HTTP 403 Forbidden (is its JSON format enabled?)"},
	}
	for _, tt := range tests {
		if res := search(t, s, tt.input); !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("Run(%s) = %+v; want an error with %q", tt.input, res, tt.want)
		}
	}
}

func TestSearchProviderError(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(llmtest.AnthropicContent(
		llmtest.AnthropicServerToolUseBlock("s1", "web_search", `{"query":"xy"}`),
		llmtest.AnthropicWebSearchErrorBlock("s1", "too_many_requests"), llmtest.AnthropicTextBlock("sorry"))))
	m, err := anthropic.New(anthropic.Options{APIKey: "k", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	res := search(t, NewSearch(ModelSearch{Model: m}), `{"query":"xy"}`)
	if !res.IsError || !strings.Contains(res.Content, "the provider's search failed: too_many_requests") {
		t.Errorf("result = %+v", res)
	}
}

func TestParseSearXNG(t *testing.T) {
	tests := []struct {
		body string
		n    int
		err  string
	}{
		{`{"results":[]}`, 0, ""},
		{`{"results":[{"title":"a","url":"https://a.test"}]}`, 1, ""},
		{`{"results":[{"title":"a","url":"ftp://a.test"}]}`, 0, ""},
		{`{}`, 0, `no "results" array`},
		{`[]`, 0, "not SearXNG JSON"},
		{`<html>`, 0, "not SearXNG JSON"},
	}
	for _, tt := range tests {
		hits, err := ParseSearXNG([]byte(tt.body))
		if len(hits) != tt.n || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("ParseSearXNG(%s) = %v, %v; want %d hits, err %q", tt.body, hits, err, tt.n, tt.err)
		}
	}
}

func FuzzParseSearXNG(f *testing.F) {
	for _, s := range []string{`{"results":[{"title":"a","url":"https://a.test/x","publishedDate":"2026-01-01"}]}`, `{}`, `[]`, `{"results":null}`, `{"results":[{"url":7}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		hits, err := ParseSearXNG(body)
		if err != nil && hits != nil {
			t.Fatalf("hits with an error")
		}
		for _, h := range hits {
			if hostOf(h.URL) == "" {
				t.Fatalf("hit %q has no http(s) host", h.URL)
			}
		}
		_ = format("q", Found{Hits: Filter(hits, Query{BlockedDomains: []string{"a.test"}})})
	})
}

func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"<html><body><h1>x</h1><a href='/y'>y</a><table><tr><td>1</td></tr></table></body></html>", "plain", "\x89PNG", "<!doctype html><p>"} {
		f.Add([]byte(s), "text/html")
	}
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		md, err := Markdown(body, ct, "https://example.com/page")
		if err == nil && !utfValid(md) {
			t.Fatalf("Markdown returned invalid UTF-8")
		}
	})
}
