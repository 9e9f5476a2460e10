package main

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/llm/llmtest"
)

// TestReadImageOpenAI: the model Reads a PNG through troupe -p on an
// OpenAI-compatible server: the picture follows the tool message as an
// image_url part, or, with TROUPE_OPENAI_TEXT_ONLY, stays a line of text.
func TestReadImageOpenAI(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	png.Encode(&buf, image.NewGray(image.Rect(0, 0, 6, 4)))
	if err := os.WriteFile(filepath.Join(dir, "shot.png"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, textOnly := range []bool{false, true} {
		srv := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(
			llmtest.OpenAIToolCall("call_1", "Read", `{"file_path": "shot.png"}`),
			llmtest.OpenAIText("a grey picture"),
		))
		env := map[string]string{"OPENAI_BASE_URL": srv.URL}
		if textOnly {
			env["TROUPE_OPENAI_TEXT_ONLY"] = "1"
		}
		if out, err := headlessRun(t, dir, env, "", "-p", "--trust", "--model", "local-model", "look at shot.png"); err != nil || !strings.Contains(out, "a grey picture") {
			t.Fatalf("troupe -p (text only %v): %v\n%s", textOnly, err, out)
		}
		msgs := srv.Request(1).Messages
		var tool string
		var images []string
		for _, m := range msgs {
			if m.Role == "tool" {
				tool = m.Content
			}
			images = append(images, m.Images...)
		}
		if !strings.Contains(tool, "PNG image, 6x4 pixels") {
			t.Errorf("text only %v: tool message = %q; want the picture's description", textOnly, tool)
		}
		switch {
		case !textOnly && (len(images) != 1 || !strings.HasPrefix(images[0], "data:image/png;base64,")):
			t.Errorf("images sent = %.60q; want the PNG as a data URL", images)
		case textOnly && (len(images) != 0 || !strings.Contains(tool, "[image image/png, ")):
			t.Errorf("text only: images %d, tool message %q; want no image part and a line of text", len(images), tool)
		}
	}
}
