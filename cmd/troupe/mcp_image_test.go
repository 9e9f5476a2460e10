package main

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/llm/llmtest"
	"github.com/troupe-dev/troupe/mcp/mcptest"
)

// TestMCPImageReachesModel: a go-sdk MCP server's ImageContent reaches the
// Anthropic API as an image block of the tool_result, through troupe -p.
func TestMCPImageReachesModel(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(
		llmtest.AnthropicToolCall("toolu_1", "mcp__local__media", `{}`),
		llmtest.AnthropicText("a red dot"),
		llmtest.AnthropicText("still red"),
	))
	cwd, home := t.TempDir(), t.TempDir()
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL}
	troupe := func(args ...string) {
		t.Helper()
		var out, errOut bytes.Buffer
		m := &Main{
			Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
			Getenv:  func(k string) string { return env[k] },
			HomeDir: func() (string, error) { return home, nil },
			Getwd:   func() (string, error) { return cwd, nil },
			Now:     time.Now,
			NewID:   func() string { return "session-1" },
			Version: "v0.0.0-test",
		}
		if err := m.Run(t.Context(), append([]string{"--home", home}, args...)); err != nil {
			t.Fatalf("troupe %q: %v\nstdout: %s\nstderr: %s", args, err, out.String(), errOut.String())
		}
	}
	troupe("-p", "--trust", "--mcp-config", stdioConfig(t, "local", "ok"), "--allowedTools", "mcp__local", "look")
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

	// The session record keeps the picture once, for --resume; the
	// transcripts note it without its data.
	b64 := base64.StdEncoding.EncodeToString(mcptest.PNG)
	rec, err := os.ReadFile(filepath.Join(home, "sessions", "session-1.jsonl"))
	if n := strings.Count(string(rec), b64); err != nil || n != 1 {
		t.Errorf("session record holds the picture %d times (%v); want once", n, err)
	}
	trans, _ := filepath.Glob(filepath.Join(home, "sessions", "session-1", "*.jsonl"))
	for _, p := range trans {
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), b64) || !strings.Contains(string(b), `"omitted_bytes":`) {
			t.Errorf("transcript %s: want the picture noted without its data:\n%s", p, b)
		}
	}
	if len(trans) == 0 {
		t.Error("no transcript written")
	}

	// A resumed conversation still shows the picture to the model.
	troupe("-p", "--trust", "--resume", "session-1", "and now?")
	if imgs := srv.LastRequest().Images(); len(imgs) != 1 || imgs[0].Source.Data != b64 {
		t.Errorf("resumed request carries %d images; want the picture", len(imgs))
	}
}

// TestMCPNPMImage: the reference server's get-tiny-image (a real PNG from
// a TypeScript server) reaches the model as an image block, which the fake
// API checks is a PNG.
func TestMCPNPMImage(t *testing.T) {
	everything := mcptest.NPMBin(t, "mcp-server-everything")
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(
		llmtest.AnthropicToolCall("toolu_1", "mcp__everything__get-tiny-image", `{}`),
		llmtest.AnthropicText("tiny"),
	))
	cfg := `{"mcpServers": {"everything": {"command": "` + everything + `", "args": ["stdio"]}}}`
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL}
	out, stderr, err := runMCP(t, t.TempDir(), env, "-p", "--trust", "--mcp-config", cfg, "--allowedTools", "mcp__everything", "look")
	if err != nil || !strings.Contains(out, "tiny") {
		t.Fatalf("troupe -p: %v\nstdout: %s\nstderr: %s", err, out, stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests; want 2", len(reqs))
	}
	imgs := reqs[1].Images()
	if len(imgs) != 1 || imgs[0].Source.MediaType != "image/png" {
		t.Fatalf("images sent to the model = %+v; want the server's PNG", imgs)
	}
	if data, err := base64.StdEncoding.DecodeString(imgs[0].Source.Data); err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
		t.Errorf("image data = %.40q, %v; want a PNG", imgs[0].Source.Data, err)
	}
}
