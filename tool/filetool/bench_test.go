package filetool

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/tool"
)

// goSrc is the Go distribution's source tree, the large real tree the
// benchmarks search when it is there.
const goSrc = "/usr/local/go/src"

// benchCase is one Grep input measured on each tree.
type benchCase struct {
	name  string
	input map[string]any
	rg    []string // the ripgrep arguments that do the same search
}

// grepCases are the searches the benchmarks and the ripgrep comparison
// share. needle, prefix and fold are the tree's words to look for.
func grepCases(needle, prefixRE, fold string) []benchCase {
	return []benchCase{
		{"literal", map[string]any{"pattern": needle}, []string{"-l", needle}},
		{"regexp", map[string]any{"pattern": prefixRE}, []string{"-l", prefixRE}},
		{"ignorecase", map[string]any{"pattern": fold, "-i": true}, []string{"-l", "-i", fold}},
		{"count", map[string]any{"pattern": needle, "output_mode": "count"}, []string{"-c", needle}},
		{"content-C2", map[string]any{"pattern": needle, "output_mode": "content", "-C": 2}, []string{"-n", "-C", "2", needle}},
	}
}

// goSrcCases are grepCases for the Go source tree.
func goSrcCases() []benchCase {
	return grepCases("ErrShortWrite", `func \(\w+ \*\w+\) SetDeadline\(`, "deadline exceeded")
}

// genCases are grepCases for genTree.
func genCases() []benchCase {
	return grepCases("needleword", `func needle\w+\(`, "NEEDLEWORD")
}

// genWords are the words genTree's files are made of.
var genWords = strings.Fields("the quick brown fox jumps over a lazy dog func return if else for range var const type struct interface map chan go select case default package import error nil true false")

// genTree writes n small files (about 1 KiB of words each, 100 to a
// folder) below dir, a git repository whose .gitignore excludes *.log and
// a build folder; one file in 500 holds the needles.
func genTree(tb testing.TB, dir string, n int) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	must := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, ".git"), 0o755))
	must(os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.log\n/build/\n"), 0o644))
	var b strings.Builder
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", i/100/10), fmt.Sprintf("e%02d", i/100%10))
		if i%100 == 0 {
			must(os.MkdirAll(sub, 0o755))
		}
		b.Reset()
		for line := 0; line < 30; line++ {
			for w := 0; w < 6; w++ {
				b.WriteString(genWords[rng.IntN(len(genWords))])
				b.WriteByte(' ')
			}
			if i%500 == 7 && line == 12 {
				b.WriteString("func needleWord() // needleword here")
			}
			b.WriteByte('\n')
		}
		name := fmt.Sprintf("f%05d.go", i)
		if i%50 == 3 {
			name = fmt.Sprintf("f%05d.log", i) // ignored
		}
		must(os.WriteFile(filepath.Join(sub, name), []byte(b.String()), 0o644))
	}
	must(os.MkdirAll(filepath.Join(dir, "build"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "build", "out.go"), []byte("needleword\n"), 0o644))
}

// genTreeFor returns a tree of n files as genTree makes it: in a
// temporary folder, or, when TROUPE_BENCH_TREE names a folder, in
// TROUPE_BENCH_TREE/gen-N, made there the first time and reused after, so
// that repeated measurements skip writing 100,000 files.
func genTreeFor(tb testing.TB, n int) string {
	tb.Helper()
	base := os.Getenv("TROUPE_BENCH_TREE")
	if base == "" {
		dir := tb.TempDir()
		genTree(tb, dir, n)
		return dir
	}
	dir := filepath.Join(base, fmt.Sprintf("gen-%d", n))
	done := filepath.Join(base, fmt.Sprintf("gen-%d.done", n))
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	if err := os.RemoveAll(dir); err != nil {
		tb.Fatal(err)
	}
	genTree(tb, dir, n)
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// runTool runs tl with input in the benchmark, failing on an error.
func runTool(tb testing.TB, tl tool.Tool, input map[string]any) tool.Result {
	tb.Helper()
	raw, _ := json.Marshal(input)
	res, err := tl.Run(context.Background(), tool.Call{ID: "b", Name: tl.Spec().Name, Input: raw})
	if err != nil || res.IsError {
		tb.Fatalf("%s(%s) = %q, %v", tl.Spec().Name, raw, res.Content, err)
	}
	return res
}

func benchGrep(b *testing.B, root string, cases []benchCase) {
	gr := NewGrep(Config{Root: root})
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			cpu := processCPU()
			for b.Loop() {
				runTool(b, gr, c.input)
			}
			reportCPU(b, cpu)
		})
	}
}

func BenchmarkGrepGoSrc(b *testing.B) {
	if _, err := os.Stat(goSrc); err != nil {
		b.Skipf("no Go source tree at %s: %v", goSrc, err)
	}
	benchGrep(b, goSrc, goSrcCases())
}

func BenchmarkGrep100k(b *testing.B) {
	dir := genTreeFor(b, 100_000)
	benchGrep(b, dir, genCases())
}

func BenchmarkGlob100k(b *testing.B) {
	dir := genTreeFor(b, 100_000)
	gl := NewGlob(Config{Root: dir})
	cpu := processCPU()
	for b.Loop() {
		runTool(b, gl, map[string]any{"pattern": "**/*.go"})
	}
	reportCPU(b, cpu)
}

func BenchmarkGlobGoSrc(b *testing.B) {
	if _, err := os.Stat(goSrc); err != nil {
		b.Skipf("no Go source tree at %s: %v", goSrc, err)
	}
	gl := NewGlob(Config{Root: goSrc})
	cpu := processCPU()
	for b.Loop() {
		runTool(b, gl, map[string]any{"pattern": "**/*.go"})
	}
	reportCPU(b, cpu)
}

// reportCPU reports the CPU time (user and system, all goroutines) per
// operation since processCPU said since: on a machine shared with other
// work, steadier than the wall time.
func reportCPU(b *testing.B, since time.Duration) {
	b.ReportMetric(float64((processCPU()-since).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkReadEnd1G reads the last lines of a 1 GiB file: 1 MiB of short
// lines at its start and at its end, and a hole between them (which reads
// as NUL bytes, one long line) so that the file takes little disk space.
func BenchmarkReadEnd1G(b *testing.B) {
	p := filepath.Join(b.TempDir(), "big.log")
	var chunk strings.Builder
	for i := 0; chunk.Len() < 1<<20; i++ {
		fmt.Fprintf(&chunk, "%08d log line with some words in it\n", i)
	}
	const size = 1 << 30
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.WriteString(chunk.String()); err != nil {
		b.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(chunk.String()), size-int64(chunk.Len())); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	lines := 2 * strings.Count(chunk.String(), "\n") // the hole starts the second half's first line
	input := map[string]any{"file_path": p, "offset": lines - 49, "limit": 50}
	check := func(res tool.Result) {
		if !strings.Contains(res.Content, fmt.Sprintf("%6d\t", lines)) {
			b.Fatalf("Read(%v) lacks line %d:\n%s", input, lines, res.Content)
		}
	}
	// The first Read of the file counts its lines from the start; the
	// later ones start from the line index that first Read left.
	start := time.Now()
	rd := NewRead(Config{})
	check(runTool(b, rd, input))
	first := time.Since(start)
	start = time.Now()
	check(runTool(b, NewRead(Config{}), input)) // a tool that never read it, the pages cached
	fresh := time.Since(start)
	b.ResetTimer()
	for b.Loop() {
		check(runTool(b, rd, input))
	}
	b.ReportMetric(float64(first.Microseconds())/1000, "first-ms")
	b.ReportMetric(float64(fresh.Microseconds())/1000, "unindexed-ms")
}

// BenchmarkEdit edits one line in the middle of a 5 MB and a 50 MB file:
// the time should grow with the size (ns/op about ten times, MB/s about
// the same), and copies (bytes allocated per byte of the file) should stay
// about 1: the file is held once (the read), the edited file written from
// its parts.
func BenchmarkEdit(b *testing.B) {
	for _, mb := range []int{5, 50} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			p := filepath.Join(b.TempDir(), "big.txt")
			var sb strings.Builder
			for i := 0; sb.Len() < mb<<20; i++ {
				fmt.Fprintf(&sb, "%09d some words on a line of a big file\n", i)
			}
			if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
				b.Fatal(err)
			}
			// A line in the middle, which every edit finds (back and
			// forth).
			line := strings.Count(sb.String(), "\n") / 2
			from, to := fmt.Sprintf("%09d some", line), fmt.Sprintf("%09d SOME", line)
			ed := NewEdit(Config{})
			b.SetBytes(int64(sb.Len()))
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				runTool(b, ed, map[string]any{"file_path": p, "old_string": from, "new_string": to})
				from, to = to, from
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(sb.Len()), "copies")
		})
	}
}

// BenchmarkReadLongLines reads files whose lines are long and not all
// valid UTF-8 (Latin-1 bytes in them): a 64 MiB file of one line, and a
// 64 MiB file of 64 lines of 1 MiB, each Read asked for its last line.
// Each shown line is cut at 2,000 bytes and its invalid bytes shown as
// U+FFFD with a note; B/op stays far below the file's size (the line is
// passed through a 1 MiB buffer, not held), and the time grows with the
// bytes before the line asked for.
func BenchmarkReadLongLines(b *testing.B) {
	for _, c := range []struct {
		name  string
		lines int
	}{{"one-64MiB-line", 1}, {"64-lines-of-1MiB", 64}} {
		b.Run(c.name, func(b *testing.B) {
			p := filepath.Join(b.TempDir(), "long.txt")
			per := 64 << 20 / c.lines
			const latin1 = "caf\xe9 na\xefve "
			line := []byte(strings.Repeat(latin1, per/len(latin1)+1)[:per-1] + "\n")
			f, err := os.Create(p)
			if err != nil {
				b.Fatal(err)
			}
			for range c.lines {
				if _, err := f.Write(line); err != nil {
					b.Fatal(err)
				}
			}
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
			input := map[string]any{"file_path": p, "offset": c.lines, "limit": 1}
			b.SetBytes(int64(c.lines * len(line)))
			b.ReportAllocs()
			for b.Loop() {
				res := runTool(b, NewRead(Config{}), input)
				if !strings.Contains(res.Content, "line truncated") || !strings.Contains(res.Content, "not valid UTF-8") {
					b.Fatalf("Read(%v) does not say the line was cut and not UTF-8:\n%.300s", input, res.Content)
				}
			}
		})
	}
}
