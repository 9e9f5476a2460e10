package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
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
