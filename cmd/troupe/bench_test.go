package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/bench"
	"github.com/troupe-dev/troupe/cli/benchcmd"
	"github.com/troupe-dev/troupe/mcp/mcptest"
)

// benchChildEnv makes the test binary act as the troupe binary for the
// bench commands' child processes, which run os.Executable() with
// "bench child CONFIG".
const benchChildEnv = "TROUPE_CMD_BENCH_CHILD"

func TestMain(m *testing.M) {
	mcptest.Serve() // the test binary as a stdio MCP server (mcp_test.go)
	if os.Getenv(asTroupeEnv) == "1" {
		main() // the test binary is troupe: pane teammates of the team tests
		os.Exit(0)
	}
	if os.Getenv(benchChildEnv) == "1" {
		a := newApp(Main{})
		root := benchRoot(a)
		root.SetArgs(os.Args[1:])
		if err := root.ExecuteContext(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "troupe:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if troupeBin.dir != "" {
		os.RemoveAll(troupeBin.dir)
	}
	os.Exit(code)
}

// troupeBin is the troupe binary builtTroupe made, once per test run.
var troupeBin struct {
	once      sync.Once
	dir, path string
	err       error
}

// builtTroupe returns the troupe binary built from this package (go
// build, once per test run, removed at its end), for tests that need a
// real binary of their own; it skips without the go tool.
func builtTroupe(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool: %v", err)
	}
	troupeBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "troupe-bin-")
		if err != nil {
			troupeBin.err = err
			return
		}
		troupeBin.dir = dir
		bin := filepath.Join(dir, "troupe")
		if runtime.GOOS == "windows" {
			bin += ".exe"
		}
		if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
			troupeBin.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		troupeBin.path = bin
	})
	if troupeBin.err != nil {
		t.Fatal(troupeBin.err)
	}
	return troupeBin.path
}

// benchRoot returns the root command with the bench command on it (added
// here while the root does not register it yet).
func benchRoot(a *app) *cobra.Command {
	root := a.rootCommand()
	for _, c := range root.Commands() {
		if c.Name() == "bench" {
			return root
		}
	}
	root.AddCommand(benchcmd.New(a.App))
	return root
}

// runBench runs "troupe [--json] bench args..." in-process; its children
// are this test binary.
func runBench(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	t.Setenv(benchChildEnv, "1") // inherited by the children only: TestMain has run
	var out, errOut bytes.Buffer
	m := &Main{
		Stdout: &out,
		Stderr: &errOut,
		Getenv: func(k string) string { return env[k] },
	}
	a := newApp(*m)
	root := benchRoot(a)
	root.SetArgs(append([]string{"bench"}, args...))
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.ExecuteContext(t.Context())
	return result{out.String(), errOut.String(), err}
}

func TestBenchMailbox(t *testing.T) {
	r := runBench(t, nil, "mailbox", "--writers", "1,2", "--msgs", "4", "--delivery", "3",
		"--gap-min", "1ms", "--gap-max", "5ms", "--tmp", t.TempDir())
	if r.err != nil {
		t.Fatalf("bench mailbox: %v\nstderr:\n%s", r.err, r.stderr)
	}
	for _, want := range []string{"### Writers into one inbox", "| 1 | 4 | 0 | 0 | 4 / 4 | 0 |", "| 2 | 4 | 0 | 0 | 8 / 8 | 0 |", "### Delivery latency", "| 3 (0 failed) | 1-5 | 50 |"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("bench mailbox output lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "writers W=2 M=4 preload=0 rep=0: starting 2 writer processes") {
		t.Errorf("bench mailbox printed no progress on stderr:\n%s", r.stderr)
	}
}

func TestBenchMailboxJSON(t *testing.T) {
	r := runBench(t, nil, "--json", "mailbox", "--writers", "2", "--msgs", "3", "--preload", "10", "--reps", "2", "--interop", "1", "--tmp", t.TempDir())
	if r.err != nil {
		t.Fatalf("bench mailbox --json: %v\nstderr:\n%s", r.err, r.stderr)
	}
	var rep bench.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("bench mailbox --json printed no report: %v\n%s", err, r.stdout)
	}
	if len(rep.Writers) != 2 {
		t.Fatalf("report has %d writer runs; want 2 (one per rep)", len(rep.Writers))
	}
	for _, w := range rep.Writers {
		if w.OK != 6 || w.Preload != 10 || w.Verify.Stored != 16 || !w.Verify.Clean() {
			t.Errorf("writer run %+v; want 6 sends ok into an inbox of 16, clean", w)
		}
	}
	if len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0], "TROUPE_PEER_BENCH") {
		t.Errorf("report skipped %q; want B8 skipped for want of a peer-bench folder", rep.Skipped)
	}
	if rep.Machine.CPUs < 1 || rep.Machine.Go == "" {
		t.Errorf("report machine %+v; want it described", rep.Machine)
	}
}

func TestBenchClaim(t *testing.T) {
	r := runBench(t, nil, "--json", "claim", "--agents", "2,3", "--rounds", "2", "--drain-agents", "2", "--drain-tasks", "5", "--tmp", t.TempDir())
	if r.err != nil {
		t.Fatalf("bench claim --json: %v\nstderr:\n%s", r.err, r.stderr)
	}
	var rep bench.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("bench claim --json printed no report: %v\n%s", err, r.stdout)
	}
	if len(rep.Race) != 2 || len(rep.Drain) != 1 {
		t.Fatalf("report has %d races and %d drains; want 2 and 1", len(rep.Race), len(rep.Drain))
	}
	for _, race := range rep.Race {
		if race.Violations != 0 || race.Outcomes["won"] != 2 {
			t.Errorf("race %+v; want one winner in each of 2 rounds", race)
		}
	}
	if d := rep.Drain[0]; d.Completed != 5 || d.DoubleClaims != 0 {
		t.Errorf("drain %+v; want 5 tasks completed, none claimed twice", d)
	}
}

func TestBenchUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad writers", []string{"mailbox", "--writers", "1,x"}, "--writers"},
		{"negative writers", []string{"mailbox", "--writers", "-4"}, "--writers"},
		{"no messages", []string{"mailbox", "--msgs", "0"}, "--msgs"},
		{"gaps reversed", []string{"mailbox", "--writers", "0", "--delivery", "1", "--gap-min", "2s", "--gap-max", "1s"}, "--gap-min"},
		{"bad peer mode", []string{"mailbox", "--peer-modes", "legacy,future"}, "--peer-modes"},
		{"bad agents", []string{"claim", "--agents", "four"}, "--agents"},
		{"negative rounds", []string{"claim", "--rounds", "-1"}, "--rounds"},
		{"argument", []string{"claim", "extra"}, "unexpected argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runBench(t, nil, tt.args...)
			var ue *UsageError
			if !errors.As(r.err, &ue) || !strings.Contains(r.err.Error(), tt.want) {
				t.Errorf("bench %s = %v; want a usage error about %s", strings.Join(tt.args, " "), r.err, tt.want)
			}
		})
	}
}

// TestBenchProfileDirMade: --cpuprofile names a folder that need not
// exist: it is made, and every child writes its profile into it (a child
// that could not create its file exited early, failing the run).
func TestBenchProfileDirMade(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not", "yet")
	r := runBench(t, nil, "claim", "--agents", "2", "--rounds", "1", "--drain-agents", "0", "--cpuprofile", dir, "--tmp", t.TempDir())
	if r.err != nil {
		t.Fatalf("bench claim --cpuprofile %s: %v\nstderr:\n%s", dir, r.err, r.stderr)
	}
	profiles, err := filepath.Glob(filepath.Join(dir, "*.pprof"))
	if err != nil || len(profiles) < 2 {
		t.Errorf("profiles in %s: %v, %v; want one per claimer", dir, profiles, err)
	}
}
