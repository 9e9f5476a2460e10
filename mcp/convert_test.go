package mcp

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/mcp/mcptest"
)

func TestConvertImages(t *testing.T) {
	big := make([]byte, llm.MaxImageBytes+1)
	copy(big, mcptest.PNG)
	res := convert(&sdk.CallToolResult{Content: []sdk.Content{
		&sdk.ImageContent{MIMEType: "image/png", Data: mcptest.PNG},
		&sdk.ImageContent{MIMEType: "image/svg+xml", Data: []byte("<svg/>")},
		&sdk.ImageContent{MIMEType: "image/png", Data: big},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.png", MIMEType: "image/png", Blob: mcptest.PNG}},
	}})
	if len(res.Images) != 2 || !bytes.Equal(res.Images[0].Data, mcptest.PNG) || !bytes.Equal(res.Images[1].Data, mcptest.PNG) {
		t.Errorf("images = %d; want the PNG and the embedded PNG", len(res.Images))
	}
	for _, want := range []string{"[image image/svg+xml, 6 bytes: not shown, the model takes PNG, JPEG, GIF and WebP]",
		"larger than the " + strconv.Itoa(llm.MaxImageBytes) + " bytes a model takes"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("content = %q; want %q", res.Content, want)
		}
	}
}
