package main

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/llm/llmtest"
	"github.com/troupe-dev/troupe/mcp/mcptest"
)

// TestMCPImageReachesModel: a go-sdk MCP server's ImageContent reaches the
// Anthropic API as an image block of the tool_result, through troupe -p.
func TestMCPImageReachesModel(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(
		llmtest.AnthropicToolCall("toolu_1", "mcp__local__media", `{}`),
		llmtest.AnthropicText("a red dot"),
	))
	cwd := t.TempDir()
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL}
	out, stderr, err := runMCP(t, cwd, env, "-p", "--mcp-config", stdioConfig(t, "local", "ok"), "--allowedTools", "mcp__local", "look")
	if err != nil || !strings.Contains(out, "a red dot") {
		t.Fatalf("troupe -p: %v\nstdout: %s\nstderr: %s", err, out, stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests; want 2", len(reqs))
	}
	imgs := reqs[1].Images()
	if len(imgs) != 1 || imgs[0].Source.MediaType != "image/png" || imgs[0].Source.Data != base64.StdEncoding.EncodeToString(mcptest.PNG) {
		t.Fatalf("images sent to the model = %+v; want the MCP server's PNG", imgs)
	}
	tr := reqs[1].LastMessage().Content[0]
	if tr.Type != "tool_result" || !strings.Contains(tr.Text, "here") || tr.Inner[len(tr.Inner)-1].Type != "image" {
		t.Errorf("tool_result = %+v; want its text, then the image", tr)
	}
}
