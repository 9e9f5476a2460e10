package memory

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkLoad renders a typical memory folder (a 40-line index and 8
// topic files of 1.5 KB) and reports the bytes it adds to the lead's
// system prompt, and the fixed cost with an empty index.
func BenchmarkLoad(b *testing.B) {
	dir := b.TempDir()
	var idx strings.Builder
	for i := range 40 {
		fmt.Fprintf(&idx, "- [topic %d](topic%d.md): one line about it\n", i, i%8)
	}
	writeB(b, filepath.Join(dir, Index), idx.String())
	for i := range 8 {
		writeB(b, filepath.Join(dir, fmt.Sprintf("topic%d.md", i)), strings.Repeat("A fact worth keeping. ", 70))
	}
	var n int
	for b.Loop() {
		s, err := Load(dir, 0)
		if err != nil {
			b.Fatal(err)
		}
		n = len(s)
	}
	b.ReportMetric(float64(n), "prompt-bytes")
	small := b.TempDir()
	writeB(b, filepath.Join(small, Index), "x")
	s, _ := Load(small, 0)
	b.ReportMetric(float64(len(s)-1-len(small)), "overhead-bytes")
}

func writeB(b *testing.B, path, s string) {
	b.Helper()
	if err := writeFileErr(path, s); err != nil {
		b.Fatal(err)
	}
}
