package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestHeadlessTelemetry: troupe -p with OTEL_EXPORTER_OTLP_ENDPOINT sends
// its spans to that OTLP/HTTP receiver before it exits; the service name
// and the span names are in the export.
func TestHeadlessTelemetry(t *testing.T) {
	var mu sync.Mutex
	var got []byte
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		if r.URL.Path == "/v1/traces" {
			got = append(got, b...)
		}
		mu.Unlock()
	}))
	defer recv.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("alpha\n"), 0o644)
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(`{"turns": [
	  {"match": {"turn": 0}, "reply": {"tool_calls": [{"name": "Read", "input": {"file_path": "notes.txt"}}], "usage": {"input_tokens": 100, "output_tokens": 20}}},
	  {"match": {"tool_result": "Read"}, "reply": {"text": "alpha", "usage": {"input_tokens": 150, "output_tokens": 12}}}]}`), 0o644)
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL}
	if out, err := headlessRun(t, dir, env, "", "-p", "--trust", "--provider", "scripted", "--script", script, "read the notes"); err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"troupe.run", "troupe.model", "troupe.tool", "Read", "service.name", "gen_ai.usage.input_tokens"} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("the OTLP export (%d bytes) lacks %q", len(got), want)
		}
	}
}
