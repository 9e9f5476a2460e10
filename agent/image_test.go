package agent

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// A tool's images reach the model in its tool_result; the transcript keeps
// their type and size only.
func TestToolImagesReachModelNotTranscript(t *testing.T) {
	m := script(t, `{"turns": [
	  {"match": {"turn": 0}, "reply": {"tool_calls": [{"name": "Shot", "input": {}}]}},
	  {"match": {"tool_result": "Shot"}, "reply": {"text": "seen"}}]}`)
	pic := bytes.Repeat([]byte("P"), 1<<20)
	shot := &fakeTool{name: "Shot", ro: true, run: func(context.Context, tool.Call) (tool.Result, error) {
		return tool.Result{Content: "screen", Images: []llm.Image{{MediaType: llm.ImagePNG, Data: pic}}}, nil
	}}
	var trans bytes.Buffer
	a := newAgent(t, Config{Model: m, Transcript: &trans}, shot)
	if _, err := a.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	msgs := a.Messages()
	res := msgs[2].Content[0]
	if res.Type != llm.BlockToolResult || len(res.Images) != 1 || !bytes.Equal(res.Images[0].Data, pic) {
		t.Fatalf("tool result = %+v; want the picture", res)
	}
	if strings.Contains(trans.String(), "UFBQ") { // base64 of "PPP"
		t.Error("the transcript holds the image data")
	}
	if trans.Len() > 4096 {
		t.Errorf("the transcript of a run with a 1 MiB picture is %d bytes; want it small", trans.Len())
	}
	t.Logf("transcript of a run with a 1 MiB picture: %d bytes", trans.Len())
	if n := strings.Count(trans.String(), `"omitted_bytes":1048576`); n != 2 {
		t.Errorf("transcript notes the image %d times; want 2 (tool result and user message):\n%s", n, trans.String())
	}
}
