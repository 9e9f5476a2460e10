package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/mcp"
	"github.com/troupe-dev/troupe/mcp/mcptest"
	"github.com/troupe-dev/troupe/tool"
)

type shotTool struct{}

func (shotTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "Shot", Description: "A picture.", InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (shotTool) ReadOnly(json.RawMessage) bool { return true }
func (shotTool) Run(context.Context, tool.Call) (tool.Result, error) {
	return tool.Result{Content: "a dot", Images: []llm.Image{{MediaType: llm.ImagePNG, Data: mcptest.PNG}}}, nil
}

// TestExposeImages: a served tool's pictures are image content after its
// text.
func TestExposeImages(t *testing.T) {
	e := mcp.Expose("t", "1", "", []tool.Tool{shotTool{}})
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	go e.ServeStdio(t.Context(), sr, sw)
	c := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil)
	sess, err := c.Connect(t.Context(), &sdk.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "Shot", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 2 {
		t.Fatalf("content = %d parts; want text and image", len(res.Content))
	}
	im, ok := res.Content[1].(*sdk.ImageContent)
	if txt, _ := res.Content[0].(*sdk.TextContent); txt == nil || txt.Text != "a dot" || !ok || im.MIMEType != "image/png" || !bytes.Equal(im.Data, mcptest.PNG) {
		t.Errorf("content = %+v, %+v; want the text, then the PNG", res.Content[0], res.Content[1])
	}
}

// BenchmarkCallImage calls an MCP tool that returns a 1 MiB PNG over
// streamable HTTP, through to the tool.Result the model gets.
func BenchmarkCallImage(b *testing.B) {
	pic := append(append([]byte(nil), mcptest.PNG...), make([]byte, 1<<20-len(mcptest.PNG))...)
	s := sdk.NewServer(&sdk.Implementation{Name: "pics", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "shot", Description: "A screenshot."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: pic}}}, nil, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	defer hs.Close()
	m := start(b, []mcp.Server{{Name: "pics", Type: mcp.TypeHTTP, URL: hs.URL}}, mcp.Options{})
	var shot tool.Tool
	for _, t := range m.Tools() {
		if t.Spec().Name == "mcp__pics__shot" {
			shot = t
		}
	}
	if shot == nil {
		b.Fatalf("no shot tool: %+v", m.Status())
	}
	b.SetBytes(int64(len(pic)))
	for b.Loop() {
		res, err := shot.Run(b.Context(), tool.Call{ID: "1", Name: "mcp__pics__shot", Input: json.RawMessage(`{}`)})
		if err != nil || len(res.Images) != 1 || len(res.Images[0].Data) != len(pic) {
			b.Fatalf("Run = %q (%d images), %v", res.Content, len(res.Images), err)
		}
	}
}
