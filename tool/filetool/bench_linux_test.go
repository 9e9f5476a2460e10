package filetool

import (
	"fmt"
	"os"
	"path/filepath"
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
	p := filepath.Join(b.TempDir(), "dense.log")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	var chunk strings.Builder
	for i := 0; chunk.Len() < 4<<20; i++ {
		fmt.Fprintf(&chunk, "%08d 2026-12-03T13:00:00Z INFO request served path=/api/v1/items status=200\n", i)
	}
	lines := 0
	for size := 0; size < 1<<30; size += chunk.Len() {
		if _, err := f.WriteString(chunk.String()); err != nil {
			b.Fatal(err)
		}
		lines += strings.Count(chunk.String(), "\n")
	}
	if err := f.Sync(); err != nil { // clean pages, which the kernel can drop
		b.Fatal(err)
	}
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
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		b.Fatal(err)
	}
	f.Close()
	rd := NewRead(Config{})
	cold := check(rd)
	indexed := check(rd)
	b.ResetTimer()
	cpu := processCPU()
	for b.Loop() {
		check(NewRead(Config{}))
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(cold.Microseconds())/1000, "cold-ms")
	b.ReportMetric(float64(indexed.Microseconds())/1000, "indexed-ms")
}
