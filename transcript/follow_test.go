package transcript

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestOfAgentAndAgents(t *testing.T) {
	home := t.TempDir()
	for _, a := range []string{"lead", "helper", "a1b2c3"} {
		if _, err := Appender(Dir(home, "s-1"), Header{Agent: a, Session: "s-1"}, t0); err != nil {
			t.Fatal(err)
		}
	}
	paths, err := Find(home, "s-1")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(Dir(home, "s-1"), "broken.jsonl"), []byte("not json\n"), 0o600)
	paths = append(paths, filepath.Join(Dir(home, "s-1"), "broken.jsonl"))
	if got := Agents(paths); !slices.Equal(got, []string{"lead", "a1b2c3", "helper"}) && !slices.Equal(got, []string{"lead", "helper", "a1b2c3"}) {
		t.Errorf("Agents = %v; want the three agents, lead first, the broken file passed over", got)
	}
	if p, err := OfAgent(paths, "helper"); err != nil || filepath.Base(p) != "helper.jsonl" {
		t.Errorf("OfAgent(helper) = %q, %v", p, err)
	}
	if _, err := OfAgent(paths, "nobody"); !errors.Is(err, ErrNotFound) {
		t.Errorf("OfAgent(nobody) = %v; want ErrNotFound", err)
	}
}

// TestFollow passes on a line appended after the first read, once, and
// returns nil when ctx ends; a failing emit stops it with its error.
func TestFollow(t *testing.T) {
	dir := t.TempDir()
	w, err := Appender(dir, Header{Agent: "lead", Session: "s"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName("lead"))
	first, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	got := make(chan []Line, 4)
	done := make(chan error, 1)
	go func() {
		done <- Follow(ctx, path, first.Size, func(ls []Line) error { got <- ls; return nil })
	}()
	io.WriteString(w, `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"late"}]}}`+"\n")
	select {
	case ls := <-got:
		if len(ls) != 1 || ls[0].Message.Text() != "late" {
			t.Errorf("Follow emitted %+v; want the late line", ls)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Follow did not pass on the appended line")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Follow after ctx ended = %v; want nil", err)
	}
	if len(got) != 0 {
		t.Errorf("Follow emitted %d more batches; want the line once", len(got))
	}

	stop := errors.New("stop")
	err = Follow(t.Context(), path, 0, func([]Line) error { return stop })
	if !errors.Is(err, stop) {
		t.Errorf("Follow with a failing emit = %v; want its error", err)
	}
}

func TestRenderAgent(t *testing.T) {
	home := t.TempDir()
	w, err := Appender(Dir(home, "s-1"), Header{Agent: "helper", Session: "s-1"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"fix it"}]}}`+"\n")
	got, ok := RenderAgent(home, "s-1", "helper", func(s string) string { return s })
	if !ok || !strings.Contains(got, "fix it") {
		t.Errorf("RenderAgent(s-1, helper) = %q, %v; want the rendered transcript", got, ok)
	}
	for _, tt := range []struct{ session, agent string }{{"s-1", "nobody"}, {"s-2", "helper"}, {"..", "helper"}, {"s-1/../s-1", "helper"}, {"", "helper"}} {
		if got, ok := RenderAgent(home, tt.session, tt.agent, nil); ok {
			t.Errorf("RenderAgent(%q, %q) = %q, true; want none", tt.session, tt.agent, got)
		}
	}
}
