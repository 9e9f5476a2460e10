package openai_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"strconv"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/llmtest"
	"github.com/troupe-dev/troupe/llm/openai"
)

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 3, 2))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// imageConversation: two parallel calls, the second returning a picture,
// and a pending message after the results.
func imageConversation(data []byte) llm.Request {
	shot := llm.ToolResult("call_2", "a screenshot", false)
	shot.Images = []llm.Image{{MediaType: llm.ImagePNG, Data: data}}
	return llm.Request{Messages: []llm.Message{
		llm.UserText("look"),
		{Role: llm.RoleAssistant, Content: []llm.Block{
			llm.ToolUse("call_1", "Echo", []byte(`{}`)), llm.ToolUse("call_2", "Shot", []byte(`{}`))}},
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult("call_1", "echo", false), shot, llm.Text("and hurry")}},
	}}
}

// The pictures of tool results follow the tool messages in a user message
// of image_url parts, since a tool message takes text only.
func TestToolResultImageOnTheWire(t *testing.T) {
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(llmtest.OpenAIText("grey")))
	m := newModel(t, s)
	data := pngBytes(t)
	if _, err := llm.Complete(t.Context(), m, imageConversation(data)); err != nil {
		t.Fatalf("Complete: %v", err) // the fake server refuses images outside user messages
	}
	msgs := s.Request(0).Messages
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if got, want := strings.Join(roles, " "), "user assistant tool tool user"; got != want {
		t.Fatalf("roles = %q; want %q", got, want)
	}
	if tm := msgs[3]; tm.ToolCallID != "call_2" || tm.Content != "a screenshot\n[1 image(s) follow in the next user message]" {
		t.Errorf("tool message = %+v; want the text and a note of the picture", tm)
	}
	u := msgs[4]
	want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(data)
	if len(u.Images) != 1 || u.Images[0] != want {
		t.Fatalf("user message images = %.80q; want the PNG as a data URL", u.Images)
	}
	body := string(s.Request(0).Body)
	label, pic, pending := strings.Index(body, "returned by tool call call_2"), strings.Index(body, `"image_url"`), strings.Index(body, "and hurry")
	if u.Parts != 3 || !(0 <= label && label < pic && pic < pending) {
		t.Errorf("user message has %d parts (label at %d, picture at %d, pending text at %d); want the label naming the call, the picture, the pending text", u.Parts, label, pic, pending)
	}
}

func TestToolResultImageTextOnly(t *testing.T) {
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(llmtest.OpenAIText("ok")))
	m := newModel(t, s, func(o *openai.Options) { o.TextOnly = true })
	data := pngBytes(t)
	if _, err := llm.Complete(t.Context(), m, imageConversation(data)); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	msgs := s.Request(0).Messages
	if n := len(msgs); n != 5 || len(msgs[4].Images) != 0 || msgs[4].Content != "and hurry" {
		t.Fatalf("messages = %+v; want no image parts", msgs)
	}
	if want := "a screenshot\n[image image/png, " + strconv.Itoa(len(data)) + " bytes]"; msgs[3].Content != want {
		t.Errorf("tool message = %q; want %q", msgs[3].Content, want)
	}
}

func TestToolResultImageOmittedRefused(t *testing.T) {
	s := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(llmtest.OpenAIText("unused")))
	m := newModel(t, s)
	req := imageConversation(nil)
	req.Messages[2].Content[1].Images[0].Omitted = 99
	if _, err := llm.Complete(t.Context(), m, req); err == nil || !strings.Contains(err.Error(), "omitted") {
		t.Fatalf("Complete = %v; want an error saying the image data was omitted", err)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests sent; want none", n)
	}
}
