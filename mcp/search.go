package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// SearchThreshold is how many MCP tools may be sent to the model with
// every request; past it the tools are deferred and SearchMcpTools finds
// and loads them, as Claude Code does.
const SearchThreshold = 50

// SearchToolName is the name of the search tool.
const SearchToolName = "SearchMcpTools"

// Deferred reports whether the tool is left out of the model's requests
// until SearchMcpTools loads it (tool.Deferrer).
func (t *Tool) Deferred() bool { return t.deferred.Load() }

var _ tool.Deferrer = (*Tool)(nil)

// searchTools is the SearchMcpTools tool over the deferred tools.
type searchTools struct{ tools []*Tool }

func (*searchTools) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: SearchToolName,
		Description: "The connected MCP servers offer more tools than are listed. Search them by words of their name or description (or a server name); the tools found are loaded, so that you can call them from your next turn.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"words to look for"},"max_results":{"type":"integer","minimum":1,"maximum":20}},"required":["query"],"additionalProperties":false}`)}
}

func (*searchTools) ReadOnly(json.RawMessage) bool { return true }

func (s *searchTools) Run(_ context.Context, c tool.Call) (tool.Result, error) {
	var in struct {
		Query string `json:"query"`
		Max   int    `json:"max_results"`
	}
	if res, ok := tool.Decode(SearchToolName, c.Input, &in); !ok {
		return res, nil
	}
	words := strings.Fields(strings.ToLower(in.Query))
	if len(words) == 0 {
		return tool.Errorf("%s: query is empty", SearchToolName), nil
	}
	if in.Max <= 0 || in.Max > 20 {
		in.Max = 5
	}
	type hit struct {
		t     *Tool
		score int
	}
	var hits []hit
	for _, t := range s.tools {
		name, desc := strings.ToLower(t.spec.Name), strings.ToLower(t.spec.Description)
		score := 0
		for _, w := range words {
			if strings.Contains(name, w) {
				score += 3
			}
			if strings.Contains(desc, w) {
				score++
			}
		}
		if score > 0 {
			hits = append(hits, hit{t, score})
		}
	}
	// Stable order: by score, then registration order.
	for i := 1; i < len(hits); i++ {
		for j := i; j > 0 && hits[j].score > hits[j-1].score; j-- {
			hits[j], hits[j-1] = hits[j-1], hits[j]
		}
	}
	if len(hits) > in.Max {
		hits = hits[:in.Max]
	}
	if len(hits) == 0 {
		return tool.Result{Content: fmt.Sprintf("No MCP tool matches %q.", in.Query)}, nil
	}
	var b strings.Builder
	b.WriteString("Loaded these tools; call them from your next turn:\n")
	for _, h := range hits {
		h.t.deferred.Store(false)
		fmt.Fprintf(&b, "- %s: %s\n  input schema: %s\n", h.t.spec.Name, h.t.spec.Description, h.t.spec.InputSchema)
	}
	return tool.Result{Content: b.String()}, nil
}
