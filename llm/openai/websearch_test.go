package openai_test

import (
	"errors"
	"testing"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/llmtest"
)

// TestNoWebSearch: a request for the provider's web search fails with
// llm.ErrNoWebSearch before anything is sent; server tool blocks in the
// history are skipped.
func TestNoWebSearch(t *testing.T) {
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(llmtest.OpenAIText("ok")))
	m := newModel(t, s)
	_, err := llm.Complete(t.Context(), m, llm.Request{Messages: []llm.Message{llm.UserText("q")}, WebSearch: &llm.WebSearch{}})
	if !errors.Is(err, llm.ErrNoWebSearch) {
		t.Errorf("Complete with WebSearch: err = %v; want ErrNoWebSearch", err)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests sent; want 0", n)
	}
	history := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		{Type: llm.BlockServerToolUse, ToolUseID: "s1", Name: "web_search"},
		{Type: llm.BlockWebSearchResult, ToolUseID: "s1", Results: []llm.SearchResult{{Title: "t", URL: "https://x.test"}}},
		llm.Text("found"),
	}}
	if _, err := llm.Complete(t.Context(), m, llm.Request{Messages: []llm.Message{llm.UserText("q"), history, llm.UserText("more")}}); err != nil {
		t.Errorf("history with server tool blocks: %v", err)
	}
}
