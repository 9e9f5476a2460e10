package swarm

import (
	"context"
	"testing"
)

// A teammate spawned from a definition with a palette color gets it; the
// lead's own color and a word outside the palette get the next free one.
func TestSpawnColor(t *testing.T) {
	h := newHarness(t, `{"turns": [{"reply": {"text": "ok"}, "repeat": true}]}`, nil)
	h.create("colors")
	for _, tt := range []struct{ name, asked, want string }{
		{"ann", "purple", "purple"},
		{"bob", "red", "blue"},      // red is the lead's
		{"cid", "magenta", "green"}, // not a palette color
		{"dee", "", "yellow"},
	} {
		info, err := h.lead.Spawn(context.Background(), SpawnRequest{Name: tt.name, Prompt: "wait", Color: tt.asked})
		if err != nil {
			t.Fatal(err)
		}
		if info.Color != tt.want {
			t.Errorf("%s asked for %q: color %q; want %q", tt.name, tt.asked, info.Color, tt.want)
		}
	}
}
