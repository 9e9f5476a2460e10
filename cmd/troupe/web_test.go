package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/llm/llmtest"
)

// webSite serves one HTML page holding the answer.
func webSite(t *testing.T) *httptest.Server {
	t.Helper()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><body><h1>Answers</h1><p>The answer is <em>forty-two</em>. PAGE-ONLY-TEXT</p></body></html>`)
	}))
	t.Cleanup(site.Close)
	return site
}

// TestHeadlessWebFetchAnthropic runs troupe -p on the fake Anthropic
// server: the lead calls WebFetch on a local page, the page is asked
// about in one request of its own, and only that answer reaches the
// lead. Loopback needs a rule naming the host: without it, a bare
// WebFetch rule lets the call run but the address is refused, and with
// no rule at all the call is denied.
func TestHeadlessWebFetchAnthropic(t *testing.T) {
	site := webSite(t)
	fetch := fmt.Sprintf(`{"url": %q, "prompt": "What is the answer?"}`, site.URL+"/faq")
	tests := []struct {
		name    string
		allow   string
		asked   bool   // the page reached the model
		outcome string // in the tool result the lead saw
	}{
		{"host named", "WebFetch(domain:127.0.0.1)", true, "FORTY-TWO"},
		{"bare rule", "WebFetch", false, "127.0.0.1 is a loopback address: WebFetch reaches it only when an allow rule names it, such as WebFetch(domain:127.0.0.1)"},
		{"no rule", "Read", false, "WebFetch needs approval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replies := []llmtest.AnthropicReply{llmtest.AnthropicToolCall("toolu_w", "WebFetch", fetch)}
			if tt.asked {
				replies = append(replies, llmtest.AnthropicText("FORTY-TWO"))
			}
			replies = append(replies, llmtest.AnthropicText("LEAD-DONE"))
			srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(replies...))
			root := t.TempDir()
			env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL}
			var out, errOut bytes.Buffer
			m := &Main{Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] }, HomeDir: func() (string, error) { return root, nil }}
			err := m.Run(t.Context(), []string{"-p", "--trust", "--allowedTools", tt.allow, "--output-format", "stream-json",
				"--home", filepath.Join(root, "home"), "--cwd", root, "look it up"})
			if err != nil {
				t.Fatalf("troupe -p: %v\n%s%s", err, out.String(), errOut.String())
			}
			reqs := srv.Requests()
			if len(reqs) != len(replies) {
				t.Fatalf("%d model requests; want %d", len(reqs), len(replies))
			}
			names := []string{}
			for _, tool := range reqs[0].Tools {
				names = append(names, tool.Name)
			}
			if !slices.Contains(names, "WebFetch") || !slices.Contains(names, "WebSearch") {
				t.Errorf("lead's tools %v; want WebFetch and WebSearch (Anthropic)", names)
			}
			if tt.asked {
				ask := reqs[1]
				text := ask.LastMessage().Content[0].Text
				if len(ask.Tools) != 0 || !strings.Contains(text, "The answer is *forty-two*") || !strings.Contains(text, "What is the answer?") {
					t.Errorf("WebFetch's model request: tools %v, text %q", ask.Tools, text)
				}
			}
			last := reqs[len(reqs)-1].LastMessage()
			var result string
			for _, b := range last.Content {
				if b.Type == "tool_result" && b.ToolUseID == "toolu_w" {
					result = b.Text
				}
			}
			if !strings.Contains(result, tt.outcome) || strings.Contains(result, "PAGE-ONLY-TEXT") {
				t.Errorf("tool result the lead saw = %q; want %q and not the page", result, tt.outcome)
			}
			if tt.asked && result != "FORTY-TWO" {
				t.Errorf("tool result = %q; want only the answer", result)
			}
			lines := streamLines(t, out.String())
			var sawUse bool
			for _, l := range lines {
				if b, _ := json.Marshal(l); l["type"] == "assistant" && strings.Contains(string(b), `"name":"WebFetch"`) {
					sawUse = true
				}
			}
			if !sawUse {
				t.Errorf("stream-json has no assistant tool_use of WebFetch:\n%s", out.String())
			}
		})
	}
}

// TestHeadlessWebSearchScripted runs troupe -p on the scripted provider
// with a SearXNG-style endpoint in the project's settings: WebSearch is
// offered and its hits reach the model as titles and URLs.
func TestHeadlessWebSearchScripted(t *testing.T) {
	engine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"results":[{"title":"Result for %s","url":"https://docs.example.org/hit"}]}`, r.URL.Query().Get("q"))
	}))
	t.Cleanup(engine.Close)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".troupe"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ".troupe", "settings.json"), []byte(`{"webSearch": {"url": "`+engine.URL+`/search"}}`), 0o644)
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(`{"turns": [
	  {"match": {"tool_result": "WebSearch", "user": "Result for widgets"}, "reply": {"text": "Cited: https://docs.example.org/hit"}},
	  {"match": {"turn": 0}, "reply": {"tool_calls": [{"id": "toolu_s", "name": "WebSearch", "input": {"query": "widgets"}}]}}
	]}`), 0o644)
	out, err := headlessRun(t, dir, nil, "", "-p", "--trust", "--script", script, "--allowedTools", "WebSearch", "find widgets")
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Cited: https://docs.example.org/hit") {
		t.Errorf("output %q; want the scripted answer after the search's result", out)
	}
}

// TestHeadlessWebFetchScripted: the same WebFetch on the scripted
// provider, whose script answers the page's question by its system
// prompt.
func TestHeadlessWebFetchScripted(t *testing.T) {
	site := webSite(t)
	dir := t.TempDir()
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(fmt.Sprintf(`{"turns": [
	  {"match": {"system": "question about one web page", "user": "The answer is *forty-two*"}, "reply": {"text": "FORTY-TWO"}},
	  {"match": {"tool_result": "WebFetch", "user": "FORTY-TWO"}, "reply": {"text": "The page says FORTY-TWO."}},
	  {"match": {"turn": 0}, "reply": {"tool_calls": [{"id": "toolu_w", "name": "WebFetch", "input": {"url": %q, "prompt": "What is the answer?"}}]}}
	]}`, site.URL+"/faq")), 0o644)
	out, err := headlessRun(t, dir, nil, "", "-p", "--trust", "--script", script, "--allowedTools", "WebFetch(domain:127.0.0.1)", "look it up")
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out)
	}
	if !strings.Contains(out, "The page says FORTY-TWO.") {
		t.Errorf("output %q; want the lead's answer after WebFetch's", out)
	}
}

// TestHeadlessWebSearchAnthropic: on the fake Anthropic server, WebSearch
// makes one request offering only the server-side search, and the lead
// gets the hits' titles and URLs.
func TestHeadlessWebSearchAnthropic(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(
		llmtest.AnthropicToolCall("toolu_s", "WebSearch", `{"query": "go release", "allowed_domains": ["go.dev"]}`),
		llmtest.AnthropicContent(llmtest.AnthropicServerToolUseBlock("srvtoolu_1", "web_search", `{"query": "go release"}`),
			llmtest.AnthropicWebSearchResultBlock("srvtoolu_1", llmtest.AnthropicSearchHit{Title: "Go 1.26 is released", URL: "https://go.dev/blog/go1.26"}),
			llmtest.AnthropicTextBlock("Go 1.26 came out.")),
		llmtest.AnthropicText("LEAD-DONE"),
	))
	root := t.TempDir()
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL}
	var out, errOut bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] }, HomeDir: func() (string, error) { return root, nil }}
	if err := m.Run(t.Context(), []string{"-p", "--trust", "--allowedTools", "WebSearch", "--home", filepath.Join(root, "home"), "--cwd", root, "news?"}); err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, errOut.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests; want 3 (lead, search, lead)", len(reqs))
	}
	if ws, ok := reqs[1].WebSearchTool(); !ok || len(reqs[1].Tools) != 1 || !slices.Equal(ws.AllowedDomains, []string{"go.dev"}) {
		t.Errorf("search request tools %+v; want only the web search, allowed_domains [go.dev]", reqs[1].Tools)
	}
	var result string
	for _, b := range reqs[2].LastMessage().Content {
		if b.Type == "tool_result" {
			result = b.Text
		}
	}
	for _, want := range []string{"[Go 1.26 is released](https://go.dev/blog/go1.26)", "Go 1.26 came out."} {
		if !strings.Contains(result, want) {
			t.Errorf("tool result %q lacks %q", result, want)
		}
	}
	if !strings.Contains(out.String(), "LEAD-DONE") {
		t.Errorf("output %q", out.String())
	}
}
