package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"
)

const goAnswer = "Here is the fix:\n```go\n// Sum adds the numbers.\nfunc Sum(xs []int) int {\n\tn := 0\n\tfor _, x := range xs {\n\t\tn += x // a comment long enough to wrap at forty columns\n\t}\n\treturn n + len(\"done\")\n}\n```\nThat is all."

// A Go code block in color: a label, chroma's highlighting, long lines
// wrapped with a continuation mark (testdata/code-go.golden; -update
// rewrites it). With NO_COLOR the same lines carry no escape.
func TestCodeBlockGo(t *testing.T) {
	got := strings.Join(markdown(newStyles(false), goAnswer, 40), "\n")
	path := filepath.Join("testdata", "code-go.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("the Go block differs (-want +got):\n%s", diff)
	}
	for _, colored := range []string{"\x1b[35mfunc", "\x1b[90m// Sum adds", "\x1b[32m\"done\"", "\x1b[36mint"} {
		if !strings.Contains(got, colored) {
			t.Errorf("not highlighted: %q missing in\n%q", colored, got)
		}
	}
	plain := markdown(newStyles(true), goAnswer, 40)
	wantPlain := []string{
		"Here is the fix:",
		"  ── go",
		"  // Sum adds the numbers.",
		"  func Sum(xs []int) int {",
		"      n := 0",
		"      for _, x := range xs {",
		"          n += x // a comment long enoug",
		"↪ h to wrap at forty columns",
		"      }",
		"      return n + len(\"done\")",
		"  }",
		"That is all.",
	}
	if diff := cmp.Diff(wantPlain, plain); diff != "" {
		t.Errorf("NO_COLOR (-want +got):\n%s", diff)
	}
	if stripped := strings.Split(ansi.Strip(got), "\n"); !cmp.Equal(stripped, wantPlain) {
		t.Errorf("the colored lines are not the plain ones:\n%s", cmp.Diff(wantPlain, stripped))
	}
}

// A block is highlighted once per width: the next render of the answer
// (a streamed delta, a frame) takes it from the cache; a block still
// open is not highlighted.
func TestCodeBlockCache(t *testing.T) {
	st := newStyles(false)
	code := []string{"package cached", "var x = 1"}
	first := codeBlock(st, "go", append([]string(nil), code...), 50, true)
	hlMu.Lock()
	cached, ok := hlCache[hlKey{lang: "go", code: strings.Join(code, "\n"), w: 50}]
	hlMu.Unlock()
	if !ok || !cmp.Equal(first[1:], cached) {
		t.Fatalf("not cached: %q", cached)
	}
	if again := codeBlock(st, "go", append([]string(nil), code...), 50, true); &again[1] == &first[1] || !cmp.Equal(again, first) {
		t.Errorf("again: %q", again)
	}
	open := codeBlock(st, "go", []string{"package open"}, 50, false)
	if strings.Contains(open[1], "\x1b[35m") {
		t.Errorf("an open block is highlighted: %q", open)
	}
}
