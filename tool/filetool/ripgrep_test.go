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
// TROUPE_BENCH_RIPGREP is set (to the number of runs to take the best of;
// default 5), as it takes a while: it is a measurement, not a test.
//
//	TROUPE_BENCH_RIPGREP=5 go test -run TestRipgrepSideBySide -v ./tool/filetool/
func TestRipgrepSideBySide(t *testing.T) {
	runs := 0
	if v := os.Getenv("TROUPE_BENCH_RIPGREP"); v == "" {
		t.Skip("set TROUPE_BENCH_RIPGREP=N to time Grep against ripgrep (best of N runs)")
	} else if _, err := fmt.Sscan(v, &runs); err != nil || runs < 1 {
		runs = 5
	}
	rg := rgPath(t)
	// cost is the best wall time and the best CPU time (user and system)
	// of runs of fn, which returns the CPU time it used.
	type cost struct{ wall, cpu time.Duration }
	best := func(fn func() time.Duration) cost {
		var b cost
		for i := range runs {
			start := time.Now()
			cpu := fn()
			if d := time.Since(start); i == 0 || d < b.wall {
				b.wall = d
			}
			if i == 0 || cpu < b.cpu {
				b.cpu = cpu
			}
		}
		return b
	}
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
	gen := t.TempDir()
	genTree(t, gen, 100_000)
	var rows []string
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	add := func(tree, name string, troupe, ripgrep cost) {
		rows = append(rows, fmt.Sprintf("| %s | %s | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f |", tree, name,
			ms(troupe.wall), ms(ripgrep.wall), float64(troupe.wall)/float64(ripgrep.wall),
			ms(troupe.cpu), ms(ripgrep.cpu), float64(troupe.cpu)/float64(ripgrep.cpu)))
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
			add(tr.name, "Grep "+c.name, best(inProcess(func() { runTool(t, gr, c.input) })), best(runRG(tr.root, c.rg...)))
		}
	}
	for _, tr := range []struct{ name, root string }{{"go src", goSrc}, {"100k files", gen}} {
		if _, err := os.Stat(tr.root); err != nil {
			continue
		}
		gl := NewGlob(Config{Root: tr.root})
		add(tr.name, "Glob **/*.go", best(inProcess(func() { runTool(t, gl, map[string]any{"pattern": "**/*.go"}) })),
			best(runRG(tr.root, "--files", "-g", "*.go")))
	}
	sort.Strings(rows)
	t.Logf("best of %d runs, ms; ripgrep's time includes its process start; CPU is user plus system time (troupe's: its whole process)\n"+
		"| tree | case | troupe | rg | ratio | troupe CPU | rg CPU | CPU ratio |\n|---|---|---|---|---|---|---|---|\n%s", runs, strings.Join(rows, "\n"))
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
