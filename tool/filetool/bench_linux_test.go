package filetool

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkReadEndDense1G reads the last 50 lines of a 1 GiB file of
// short log lines, every byte on disk (no hole to skip). Each timed Read
// is the first of a new Read tool, with the file in the page cache; the
// metrics add the first Read with the file dropped from the page cache
// (cold-ms, so disk speed) and a later Read that finds the line index
// (indexed-ms).
func BenchmarkReadEndDense1G(b *testing.B) {
	p, lines := denseFile(b)
	input := map[string]any{"file_path": p, "offset": lines - 49, "limit": 50}
	check := func(rd *Read) time.Duration {
		start := time.Now()
		res := runTool(b, rd, input)
		d := time.Since(start)
		if !strings.Contains(res.Content, fmt.Sprintf("%6d\t", lines)) {
			b.Fatalf("Read(%v) lacks line %d:\n%.500s", input, lines, res.Content)
		}
		return d
	}
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		b.Fatal(err)
	}
	f.Close()
	rd := NewRead(Config{})
	cold := check(rd)
	indexed := check(rd)
	b.ResetTimer()
	cpu := processCPU()
	var firsts []time.Duration
	for b.Loop() {
		firsts = append(firsts, check(NewRead(Config{})))
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(slices.Min(firsts).Microseconds())/1000, "min-ms")
	b.ReportMetric(float64(median(firsts).Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(cold.Microseconds())/1000, "cold-ms")
	b.ReportMetric(float64(indexed.Microseconds())/1000, "indexed-ms")
}

// denseFile writes a 1 GiB file of short log lines, every byte on disk,
// and returns its path and line count: in a temporary folder, or, when
// TROUPE_BENCH_TREE names a folder, there, made the first time and reused
// after.
func denseFile(b *testing.B) (string, int) {
	var chunk strings.Builder
	for i := 0; chunk.Len() < 4<<20; i++ {
		fmt.Fprintf(&chunk, "%08d 2026-12-03T13:00:00Z INFO request served path=/api/v1/items status=200\n", i)
	}
	n := (1<<30 + chunk.Len() - 1) / chunk.Len()
	lines := n * strings.Count(chunk.String(), "\n")
	dir := b.TempDir()
	if base := os.Getenv("TROUPE_BENCH_TREE"); base != "" {
		dir = base
	}
	p := filepath.Join(dir, "dense-1g.log")
	if st, err := os.Stat(p); err == nil && st.Size() == int64(n*chunk.Len()) {
		return p, lines
	}
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for range n {
		if _, err := f.WriteString(chunk.String()); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil { // clean pages, which the kernel can drop
		b.Fatal(err)
	}
	return p, lines
}
