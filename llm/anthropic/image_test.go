package anthropic

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/llmtest"
)

// pngBytes encodes a small real PNG.
func pngBytes(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 3, 2))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// imageConversation is a tool call whose result holds text and a picture.
func imageConversation(im llm.Image) llm.Request {
	res := llm.ToolResult("toolu_1", "a screenshot", false)
	res.Images = []llm.Image{im}
	return llm.Request{Messages: []llm.Message{
		llm.UserText("look"),
		{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse("toolu_1", "Shot", []byte(`{}`))}},
		{Role: llm.RoleUser, Content: []llm.Block{res}},
	}}
}

func TestToolResultImageOnTheWire(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(llmtest.AnthropicText("a grey square")))
	m := newModel(t, srv, nil)
	data := pngBytes(t)
	if _, err := llm.Complete(t.Context(), m, imageConversation(llm.Image{MediaType: llm.ImagePNG, Data: data})); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	req := srv.LastRequest()
	tr := req.LastMessage().Content[0]
	if tr.Type != "tool_result" || len(tr.Inner) != 2 || tr.Inner[0].Type != "text" || tr.Inner[0].Text != "a screenshot" {
		t.Fatalf("tool_result content = %+v; want the text, then the image", tr.Inner)
	}
	src := tr.Inner[1].Source
	if tr.Inner[1].Type != "image" || src == nil || src.Type != "base64" || src.MediaType != "image/png" ||
		src.Data != base64.StdEncoding.EncodeToString(data) {
		t.Fatalf("image block = %+v source %+v; want the PNG as base64", tr.Inner[1], src)
	}
	if n := len(req.Images()); n != 1 {
		t.Errorf("request carries %d images; want 1", n)
	}
}

func TestToolResultImageRefused(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(llmtest.AnthropicText("unused")))
	m := newModel(t, srv, nil)
	for name, tc := range map[string]struct {
		im   llm.Image
		want error
	}{
		"omitted":    {llm.Image{MediaType: llm.ImagePNG, Omitted: 10}, llm.ErrImageOmitted},
		"media type": {llm.Image{MediaType: "image/bmp", Data: []byte("BM")}, nil},
		"no data":    {llm.Image{MediaType: llm.ImagePNG}, nil},
	} {
		_, err := llm.Complete(t.Context(), m, imageConversation(tc.im))
		if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: Complete = %v; want an error (%v)", name, err, tc.want)
		}
	}
	if n := srv.RequestCount(); n != 0 {
		t.Errorf("%d requests reached the server; want none", n)
	}
}

// BenchmarkParamsImage converts a request holding the largest picture a
// tool returns (llm.MaxImageBytes): the base64 encoding every request
// that carries it pays.
func BenchmarkParamsImage(b *testing.B) {
	m, err := New(Options{APIKey: "k", BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		b.Fatal(err)
	}
	req := imageConversation(llm.Image{MediaType: llm.ImagePNG, Data: make([]byte, llm.MaxImageBytes)})
	b.SetBytes(llm.MaxImageBytes)
	for b.Loop() {
		if _, _, err := m.params(req); err != nil {
			b.Fatal(err)
		}
	}
}

// A conversation with more pictures than a request takes sends the newest
// llm.MaxRequestImages; the older ones become text.
func TestToolResultImagesTrimmed(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(llmtest.AnthropicText("many")))
	m := newModel(t, srv, nil)
	data := pngBytes(t)
	req := llm.Request{Messages: []llm.Message{llm.UserText("look")}}
	for i := range llm.MaxRequestImages + 2 {
		id := fmt.Sprintf("toolu_%d", i)
		res := llm.ToolResult(id, "shot", false)
		res.Images = []llm.Image{{MediaType: llm.ImagePNG, Data: data}}
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse(id, "Shot", []byte(`{}`))}},
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{res}})
	}
	if _, err := llm.Complete(t.Context(), m, req); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	got := srv.LastRequest()
	if n := len(got.Images()); n != llm.MaxRequestImages {
		t.Errorf("request carries %d images; want %d", n, llm.MaxRequestImages)
	}
	if first := got.Messages[2].Content[0]; !strings.Contains(first.Text, "no longer shown") || len(first.Inner) != 1 {
		t.Errorf("the oldest result = %q with %d parts; want its picture described as no longer shown", first.Text, len(first.Inner))
	}
}
