package filetool

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// rgPath returns ripgrep's path, or skips the test when it is absent.
func rgPath(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("rg")
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("rg (ripgrep) is not installed, and CI=true needs the comparison with it (.ci/run installs it): %v", err)
		}
		tb.Skip("rg (ripgrep) is not installed; install it (apt-get install ripgrep) to compare Grep and Glob with it")
	}
	return p
}

// rgArgs are the ripgrep options that search the files Grep searches:
// hidden files too, .gitignore files outside a git repository too.
var rgArgs = []string{"--hidden", "--no-require-git", "--no-config"}

// rgCounts runs rg -c in root and returns its counts, path to matched
// lines.
func rgCounts(t *testing.T, rg, root string, args ...string) map[string]string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), rg, append(append(append([]string{}, rgArgs...), "-c"), args...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		return map[string]string{} // no matches
	} else if err != nil {
		t.Fatalf("rg %v: %v", args, err)
	}
	counts := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		i := strings.LastIndexByte(line, ':')
		counts[strings.TrimPrefix(line[:i], "./")] = line[i+1:]
	}
	return counts
}

// grepCounts runs the Grep tool in count mode and returns its counts.
func grepCounts(t *testing.T, root string, input map[string]any) map[string]string {
	t.Helper()
	input["output_mode"] = "count"
	res := runTool(t, NewGrep(Config{Root: root, MaxReadBytes: 64 << 20}), input)
	counts := map[string]string{}
	if strings.HasPrefix(res.Content, "No matches found") {
		return counts
	}
	body, _, _ := strings.Cut(res.Content, "\n\nFound ")
	for line := range strings.SplitSeq(body, "\n") {
		i := strings.LastIndexByte(line, ':')
		counts[line[:i]] = line[i+1:]
	}
	return counts
}

func TestGrepMatchesRipgrep(t *testing.T) {
	rg := rgPath(t)
	gen := t.TempDir()
	genTree(t, gen, 3000)
	type rgCase struct {
		input map[string]any
		rg    []string
	}
	type rgTree struct {
		name, root string
		cases      []rgCase
	}
	trees := []rgTree{{"generated", gen, []rgCase{
		{map[string]any{"pattern": "needleword"}, []string{"needleword"}},
		{map[string]any{"pattern": "NEEDLEWORD", "-i": true}, []string{"-i", "NEEDLEWORD"}},
		{map[string]any{"pattern": `func needle[A-Za-z]+\(`}, []string{`func needle[A-Za-z]+\(`}},
		{map[string]any{"pattern": `^lazy dog`}, []string{`^lazy dog`}},
		{map[string]any{"pattern": `struct $`}, []string{`struct $`}},
	}}}
	if _, err := os.Stat(goSrc); err == nil {
		trees = append(trees, rgTree{"go", goSrc, []rgCase{
			{map[string]any{"pattern": "ErrShortWrite", "glob": "*.go"}, []string{"-g", "*.go", "ErrShortWrite"}},
			{map[string]any{"pattern": "deadline exceeded", "-i": true, "glob": "*.go"}, []string{"-g", "*.go", "-i", "deadline exceeded"}},
			{map[string]any{"pattern": `func \([a-z]+ \*[A-Za-z]+\) SetDeadline\(`, "glob": "*.go"}, []string{"-g", "*.go", `func \([a-z]+ \*[A-Za-z]+\) SetDeadline\(`}},
			{map[string]any{"pattern": `^package main$`, "type": "go"}, []string{"-t", "go", `^package main$`}},
		}})
	} else {
		t.Logf("no Go source tree at %s; comparing on the generated tree only", goSrc)
	}
	for _, tr := range trees {
		for _, c := range tr.cases {
			t.Run(tr.name+"/"+c.input["pattern"].(string), func(t *testing.T) {
				want := rgCounts(t, rg, tr.root, c.rg...)
				got := grepCounts(t, tr.root, c.input)
				if len(want) == 0 {
					t.Fatalf("rg found nothing; the case tests nothing")
				}
				for p, n := range want {
					if got[p] != n {
						t.Errorf("%s: Grep count %q; rg %q", p, got[p], n)
					}
				}
				for p, n := range got {
					if _, ok := want[p]; !ok {
						t.Errorf("%s: Grep count %q; rg found nothing", p, n)
					}
				}
			})
		}
	}
}

// TestRipgrepSideBySide times Grep's and Glob's code and ripgrep on the
// same trees and prints the ratios. It runs only when
// TROUPE_BENCH_RIPGREP is set (to the number of runs of each side;
// default 9), as it takes a while: it is a measurement, not a test.
// TROUPE_BENCH_CASES, when set, keeps only the cases whose name contains
// it (such as "Glob").
//
// The two sides run interleaved, troupe then rg then rg then troupe and
// so on, so that both meet the same load on a shared machine; the table
// gives the median of each side's wall and CPU times and the median of
// the ratios of the pairs, and the log gives the load average before and
// after.
//
//	TROUPE_BENCH_RIPGREP=9 go test -run TestRipgrepSideBySide -v ./tool/filetool/
func TestRipgrepSideBySide(t *testing.T) {
	runs := 0
	if v := os.Getenv("TROUPE_BENCH_RIPGREP"); v == "" {
		t.Skip("set TROUPE_BENCH_RIPGREP=N to time Grep against ripgrep (N interleaved runs of each)")
	} else if _, err := fmt.Sscan(v, &runs); err != nil || runs < 1 {
		runs = 9
	}
	only := os.Getenv("TROUPE_BENCH_CASES")
	rg := rgPath(t)
	inProcess := func(fn func()) func() time.Duration {
		return func() time.Duration {
			before := processCPU()
			fn()
			return processCPU() - before
		}
	}
	runRG := func(root string, args ...string) func() time.Duration {
		return func() time.Duration {
			cmd := exec.Command(rg, append(append([]string{}, rgArgs...), args...)...)
			cmd.Dir = root
			var out bytes.Buffer
			cmd.Stdout = &out
			if err := cmd.Run(); err != nil {
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
					t.Fatalf("rg %v: %v", args, err)
				}
			}
			return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
	}
	gen := genTreeFor(t, 100_000)
	var rows []string
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	load := loadAverage()
	add := func(tree, name string, troupe, ripgrep func() time.Duration) {
		if only != "" && !strings.Contains(name, only) {
			return
		}
		troupe() // warm both: page cache, dentries, the tool's buffers
		ripgrep()
		var c pairCosts
		for i := range runs {
			if i%2 == 0 {
				c.add(timed(troupe), timed(ripgrep))
			} else {
				r := timed(ripgrep)
				c.add(timed(troupe), r)
			}
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f |", tree, name,
			ms(median(c.wall[0])), ms(median(c.wall[1])), medianRatio(c.wall[0], c.wall[1]),
			ms(median(c.cpu[0])), ms(median(c.cpu[1])), medianRatio(c.cpu[0], c.cpu[1])))
	}
	for _, tr := range []struct {
		name, root string
		cases      []benchCase
	}{{"go src", goSrc, goSrcCases()}, {"100k files", gen, genCases()}} {
		if _, err := os.Stat(tr.root); err != nil {
			t.Logf("skipping %s: %v", tr.root, err)
			continue
		}
		gr := NewGrep(Config{Root: tr.root})
		for _, c := range tr.cases {
			add(tr.name, "Grep "+c.name, inProcess(func() { runTool(t, gr, c.input) }), runRG(tr.root, c.rg...))
		}
	}
	for _, tr := range []struct{ name, root string }{{"go src", goSrc}, {"100k files", gen}} {
		if _, err := os.Stat(tr.root); err != nil {
			continue
		}
		gl := NewGlob(Config{Root: tr.root})
		add(tr.name, "Glob **/*.go", inProcess(func() { runTool(t, gl, map[string]any{"pattern": "**/*.go"}) }),
			runRG(tr.root, "--files", "-g", "*.go"))
	}
	sort.Strings(rows)
	t.Logf("%d interleaved runs of each side, medians in ms; ratio is the median of the pairs' ratios; ripgrep's time includes its process start; CPU is user plus system time (troupe's: its whole process)\n"+
		"load average (1, 5, 15 min) before: %s, after: %s\n"+
		"| tree | case | troupe | rg | ratio | troupe CPU | rg CPU | CPU ratio |\n|---|---|---|---|---|---|---|---|\n%s", runs, load, loadAverage(), strings.Join(rows, "\n"))
}

// sample is one run's wall and CPU time.
type sample struct{ wall, cpu time.Duration }

// timed runs fn, which returns the CPU time it used, and times it.
func timed(fn func() time.Duration) sample {
	start := time.Now()
	cpu := fn()
	return sample{wall: time.Since(start), cpu: cpu}
}

// pairCosts are the wall and CPU times of interleaved runs of two sides,
// [0] and [1], pair by pair.
type pairCosts struct{ wall, cpu [2][]time.Duration }

func (c *pairCosts) add(a, b sample) {
	c.wall[0] = append(c.wall[0], a.wall)
	c.wall[1] = append(c.wall[1], b.wall)
	c.cpu[0] = append(c.cpu[0], a.cpu)
	c.cpu[1] = append(c.cpu[1], b.cpu)
}

// median is the median of ds (the mean of the middle two when even).
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// medianRatio is the median of a[i]/b[i].
func medianRatio(a, b []time.Duration) float64 {
	r := make([]float64, len(a))
	for i := range a {
		r[i] = float64(a[i]) / float64(max(b[i], 1))
	}
	slices.Sort(r)
	if len(r)%2 == 1 {
		return r[len(r)/2]
	}
	return (r[len(r)/2-1] + r[len(r)/2]) / 2
}

// loadAverage is the first three fields of /proc/loadavg, or what kept
// them from being read.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// TestGlobMatchesRipgrep checks that Glob's scan finds the files that
// rg --files -g finds, on a generated tree and the Go source tree. The
// patterns match no ignored file: rg lets a -g glob override .gitignore
// (rg --files -g '*.log' lists ignored logs), Glob does not.
func TestGlobMatchesRipgrep(t *testing.T) {
	rg := rgPath(t)
	gen := t.TempDir()
	genTree(t, gen, 3000)
	type globCase struct{ root, glob, rg string }
	cases := []globCase{{gen, "**/*.go", "*.go"}}
	if _, err := os.Stat(goSrc); err == nil {
		cases = append(cases, globCase{goSrc, "**/*.go", "*.go"}, globCase{goSrc, "**/*_test.go", "*_test.go"},
			globCase{goSrc, "**/*.{s,txt}", "*.{s,txt}"})
	}
	for _, c := range cases {
		root := c.root
		t.Run(filepath.Base(root)+"/"+c.glob, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), rg, append(append([]string{}, rgArgs...), "--files", "-g", c.rg)...)
			cmd.Dir = root
			out, err := cmd.Output()
			if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
				t.Fatalf("rg --files -g %s: %v", c.rg, err)
			}
			var want []string
			for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
				if line != "" {
					want = append(want, filepath.Join(root, filepath.FromSlash(line)))
				}
			}
			m, err := compileGlob(c.glob)
			if err != nil {
				t.Fatal(err)
			}
			res, err := scanGlob(t.Context(), &globScan{open: openScanDir, match: m, keep: 1 << 30}, root, root)
			if err != nil {
				t.Fatal(err)
			}
			got := paths(res.files)
			sort.Strings(got)
			sort.Strings(want)
			if len(want) == 0 {
				t.Fatalf("rg found nothing; the case tests nothing")
			}
			if !slices.Equal(got, want) {
				t.Errorf("Glob %s finds %d files, rg --files -g %s %d; first difference: %s", c.glob, len(got), c.rg, len(want), firstDiff(got, want))
			}
		})
	}
}

// firstDiff describes where two sorted lists first differ.
func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("Glob has %q where rg has %q", got[i], want[i])
		}
	}
	if len(got) > len(want) {
		return fmt.Sprintf("Glob has %q more", got[len(want)])
	}
	if len(want) > len(got) {
		return fmt.Sprintf("rg has %q more", want[len(got)])
	}
	return "none"
}
