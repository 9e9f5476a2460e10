package agent

import (
	"slices"
	"testing"

	"github.com/troupe-dev/troupe/llm"
)

// TestCalledTools: a resumed conversation reloads the tools it called and
// those its ToolSearch calls loaded, not those of a failed search.
func TestCalledTools(t *testing.T) {
	ms := []llm.Message{
		{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse("1", "ToolSearch", nil), llm.ToolUse("2", "Read", nil), llm.ToolUse("3", "ToolSearch", nil)}},
		{Role: llm.RoleUser, Content: []llm.Block{
			llm.ToolResult("1", "Loaded 2 tool(s); they are callable now:\n{\"name\":\"mcp__a__b\",\"description\":\"x\"}\n{\"name\":\"NotebookEdit\"}\n", false),
			llm.ToolResult("2", "{\"name\":\"FromRead\"}", false),
			llm.ToolResult("3", "{\"name\":\"Failed\"}", true)}},
	}
	if got, want := calledTools(ms), []string{"ToolSearch", "Read", "ToolSearch", "mcp__a__b", "NotebookEdit"}; !slices.Equal(got, want) {
		t.Errorf("calledTools = %v; want %v", got, want)
	}
}
