package anthropic

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/llmtest"
)

// TestWebSearchPassedThrough sends a request with the server-side web
// search and reads back its server_tool_use and web_search_tool_result
// blocks, on the fake server's emulation with its domain filter.
func TestWebSearchPassedThrough(t *testing.T) {
	corpus := []llmtest.AnthropicSearchHit{
		{Title: "Go", URL: "https://go.dev/doc", PageAge: "2 days ago"},
		{Title: "Spam", URL: "https://spam.example/go"},
		{Title: "Pkg", URL: "https://pkg.go.dev/net/http"},
	}
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicWebSearch(corpus, func(q string, hits []llmtest.AnthropicSearchHit) string {
		return fmt.Sprintf("%d results for %s", len(hits), q)
	}))
	m := newModel(t, srv, nil)
	tests := []struct {
		name string
		ws   llm.WebSearch
		want []llm.SearchResult
	}{
		{"allowed", llm.WebSearch{AllowedDomains: []string{"go.dev"}, MaxUses: 2},
			[]llm.SearchResult{{Title: "Go", URL: "https://go.dev/doc", PageAge: "2 days ago"}, {Title: "Pkg", URL: "https://pkg.go.dev/net/http"}}},
		{"blocked", llm.WebSearch{BlockedDomains: []string{"spam.example"}},
			[]llm.SearchResult{{Title: "Go", URL: "https://go.dev/doc", PageAge: "2 days ago"}, {Title: "Pkg", URL: "https://pkg.go.dev/net/http"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := tt.ws
			evs, err := collect(t, m.Stream(t.Context(), llm.Request{Messages: []llm.Message{llm.UserText("golang http")}, WebSearch: &ws}))
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if n := len(ofType(evs, llm.EventToolInput)) + len(ofType(evs, llm.EventToolStart)); n != 0 {
				t.Errorf("%d tool events for a server tool; want none (the caller runs nothing)", n)
			}
			resp := ofType(evs, llm.EventDone)[0].Response
			hits, errs := resp.Message.SearchResults()
			if diff := cmp.Diff(tt.want, hits); diff != "" || len(errs) > 0 {
				t.Errorf("SearchResults() errs %v, diff (-want +got):\n%s", errs, diff)
			}
			if got := resp.Message.Text(); got != "2 results for golang http" {
				t.Errorf("text = %q", got)
			}
			if resp.StopReason != llm.StopEndTurn {
				t.Errorf("stop reason %q; want end_turn", resp.StopReason)
			}
			if c := resp.Message.Content[0]; c.Type != llm.BlockServerToolUse || c.Name != "web_search" || !strings.Contains(string(c.Input), "golang http") {
				t.Errorf("first block = %+v; want the server_tool_use with the query", c)
			}
			tool, ok := srv.LastRequest().WebSearchTool()
			if !ok || !cmp.Equal(tool.AllowedDomains, ws.AllowedDomains) || !cmp.Equal(tool.BlockedDomains, ws.BlockedDomains) || tool.MaxUses != ws.MaxUses {
				t.Errorf("request's web search tool = %+v (found %v); want %+v", tool, ok, ws)
			}
		})
	}
}

func TestWebSearchErrorAndBoth(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(llmtest.AnthropicContent(
		llmtest.AnthropicServerToolUseBlock("s1", "web_search", `{"query":"x"}`),
		llmtest.AnthropicWebSearchErrorBlock("s1", "max_uses_exceeded"),
		llmtest.AnthropicTextBlock("no luck"))))
	m := newModel(t, srv, nil)
	resp, err := llm.Complete(t.Context(), m, llm.Request{Messages: []llm.Message{llm.UserText("x")}, WebSearch: &llm.WebSearch{}})
	if err != nil {
		t.Fatal(err)
	}
	if hits, errs := resp.Message.SearchResults(); len(hits) != 0 || !cmp.Equal(errs, []string{"max_uses_exceeded"}) {
		t.Errorf("SearchResults() = %v, %v; want no hits and max_uses_exceeded", hits, errs)
	}
	// The blocks do not go back to the API (their encrypted content is
	// not kept), and a request with them is still valid.
	resp2 := resp.Message
	_, _, err = m.params(llm.Request{Messages: []llm.Message{llm.UserText("x"), resp2, llm.UserText("y")}})
	if err != nil {
		t.Errorf("params with server tool blocks: %v", err)
	}
	_, err = llm.Complete(t.Context(), m, llm.Request{Messages: []llm.Message{llm.UserText("x")},
		WebSearch: &llm.WebSearch{AllowedDomains: []string{"a"}, BlockedDomains: []string{"b"}}})
	if err == nil || !strings.Contains(err.Error(), "cannot both") {
		t.Errorf("both domain lists: err = %v; want a refusal", err)
	}
	if n := srv.RequestCount(); n != 1 {
		t.Errorf("%d requests; want 1 (the refused one never sent)", n)
	}
}
