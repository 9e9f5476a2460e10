package llmtest

import (
	"encoding/base64"
	"strings"
	"testing"
)

// pngHeader is enough of a PNG for content sniffing.
var pngHeader = base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))

func TestAnthropicImageValidation(t *testing.T) {
	for _, tc := range []struct {
		src  *AnthropicImageSource
		want string
	}{
		{&AnthropicImageSource{Type: "base64", MediaType: "image/png", Data: pngHeader}, ""},
		{nil, "source: field required"},
		{&AnthropicImageSource{Type: "base64", MediaType: "image/bmp", Data: pngHeader}, "media_type"},
		{&AnthropicImageSource{Type: "base64", MediaType: "image/png", Data: "%%%"}, "invalid base64"},
		{&AnthropicImageSource{Type: "base64", MediaType: "image/jpeg", Data: pngHeader}, "appears to be a image/png"},
		{&AnthropicImageSource{Type: "base64", MediaType: "image/png", Data: strings.Repeat("A", anthMaxImage+4)}, "exceeds 5 MB"},
	} {
		got := anthValidateImage(AnthropicBlock{Type: "image", Source: tc.src})
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("anthValidateImage(%.60v) = %q; want %q", tc.src, got, tc.want)
		}
	}
}

func TestOpenAIImageOnlyInUserMessages(t *testing.T) {
	url := `{"type":"image_url","image_url":{"url":"data:image/png;base64,` + pngHeader + `"}}`
	for _, tc := range []struct{ body, want string }{
		{`{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi"},` + url + `]}]}`, ""},
		{`{"model":"m","stream":true,"messages":[{"role":"system","content":[` + url + `]}]}`, "only allowed for messages with role 'user'"},
		{`{"model":"m","stream":true,"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":[` + url + `]}]}`, "role 'tool' contains an image URL"},
		{`{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,` + pngHeader + `"}}]}]}`, "says image/jpeg but the bytes are image/png"},
		{`{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"file:///etc/passwd"}}]}]}`, "want http(s) or a data URL"},
	} {
		r, err := oaiDecodeRequest([]byte(tc.body))
		if err != nil {
			t.Fatalf("decode %s: %v", tc.body, err)
		}
		got := oaiValidate(r)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("oaiValidate(%.80s) = %q; want %q", tc.body, got, tc.want)
		}
	}
}

// A tool result may hold what the API takes besides text and images:
// Claude Code's ToolSearch answers with tool_reference blocks, and a
// fake server that refused them failed every later call of a real
// Claude Code teammate. An unknown type is still refused.
func TestAnthropicToolResultBlocks(t *testing.T) {
	body := func(typ string) []byte {
		return []byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"` + typ + `","tool_name":"Write"}]}]}]}`)
	}
	for typ, ok := range map[string]bool{"tool_reference": true, "search_result": true, "document": true, "video": false} {
		req, err := anthDecodeRequest(body(typ))
		if err != nil {
			t.Fatal(err)
		}
		if msg := anthValidate(req); (msg == "") != ok {
			t.Errorf("a tool_result holding %q: validation %q; want accepted %v", typ, msg, ok)
		}
	}
}
