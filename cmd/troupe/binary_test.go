package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/cli/agentflags"
)

func TestVersion(t *testing.T) {
	h := &harness{t: t, home: t.TempDir()}
	out := h.ok("version")
	if want := "troupe v0.0.0-test (" + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"; out != want {
		t.Errorf("version printed %q; want %q", out, want)
	}
	var v versionInfo
	h.json(&v, "version")
	if v != (versionInfo{"v0.0.0-test", runtime.Version(), runtime.GOOS, runtime.GOARCH}) {
		t.Errorf("version --json = %+v", v)
	}
}

// TestBinary builds troupe and checks its exit statuses and its handling
// of an interrupt.
func TestBinary(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool: %v", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "troupe")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	build := exec.CommandContext(t.Context(), goTool, "build", "-o", bin, "-ldflags", "-X main.version=v9.9.9-test", ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	home := filepath.Join(dir, "home")
	env := append(os.Environ(), "TROUPE_HOME="+home, "HOME="+dir)
	troupe := func(args ...string) *exec.Cmd {
		c := exec.CommandContext(t.Context(), bin, args...)
		c.Env = env
		return c
	}

	tests := []struct {
		name       string
		args       []string
		wantStatus int
		wantOut    string // in stdout
		wantErr    string // in stderr
	}{
		{"version", []string{"version"}, 0, "troupe v9.9.9-test", ""},
		{"help", []string{"--help"}, 0, "inbox", ""},
		{"create", []string{"team", "create", "alpha"}, 0, "created team alpha", ""},
		{"add", []string{"team", "add", "alpha", "alice"}, 0, "alice@alpha", ""},
		{"failure", []string{"team", "show", "nope"}, 1, "", `troupe: NAME: unknown team "nope"`},
		{"usage", []string{"task", "get", "--team", "alpha", "x"}, 2, "", "Run 'troupe task get --help' for usage."},
		{"unknown command", []string{"nope"}, 2, "", `unknown command "nope"`},
		{"budget", []string{"-p", "--trust", "--provider", "scripted", "--script", filepath.Join("..", "..", "docs", "examples", "hello.json"), "--max-tokens", "1", "hi"},
			agentflags.ExitBudget, "", "--max-tokens allows 1 tokens"}, // budget.go
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			c := troupe(tt.args...)
			c.Stdout, c.Stderr = &stdout, &stderr
			err := c.Run()
			status := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				status = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if status != tt.wantStatus {
				t.Errorf("troupe %s: exit status %d; want %d (stderr %q)", strings.Join(tt.args, " "), status, tt.wantStatus, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.wantOut) || !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("troupe %s: stdout %q, stderr %q; want %q and %q", strings.Join(tt.args, " "), stdout.String(), stderr.String(), tt.wantOut, tt.wantErr)
			}
		})
	}

	t.Run("interrupted watch", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("no SIGINT on windows")
		}
		if out, err := troupe("inbox", "send", "--team", "alpha", "--from", "team-lead", "--to", "alice", "hello").CombinedOutput(); err != nil {
			t.Fatalf("send: %v\n%s", err, out)
		}
		watch := troupe("inbox", "watch", "--team", "alpha", "--agent", "alice")
		stdout, err := watch.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := watch.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || !strings.Contains(line, "team-lead: hello") {
			t.Fatalf("watch printed %q, %v; want the message", line, err)
		}
		if err := watch.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- watch.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("watch after SIGINT: %v; want exit status 0", err)
			}
		case <-time.After(30 * time.Second):
			watch.Process.Kill()
			t.Fatal("watch did not stop after SIGINT")
		}
	})

	t.Run("readme walkthrough", func(t *testing.T) {
		bash, err := exec.LookPath("bash")
		if err != nil || runtime.GOOS == "windows" {
			t.Skip("no bash")
		}
		// What the background watch prints depends on timing (the README
		// gives it a second); inbox watch is checked by TestInboxWatch and
		// the interrupted-watch case above.
		script := readmeBlock(t, "## The stores by hand")
		c := exec.CommandContext(t.Context(), bash, "-e", "-c", script)
		c.Dir = dir // where ./troupe is
		c.Env = append(os.Environ(), "HOME="+dir)
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("README walkthrough: %v\n%s", err, out)
		}
		for _, want := range []string{
			"alice@demo", "sent to alice, bob", "please write the parser",
			"task 2 is blocked by open task(s) 1", "refused",
			"alice claimed task 1", "bob claimed task 2", `"owner": "bob"`,
		} {
			if !strings.Contains(string(out), want) {
				t.Errorf("README walkthrough output lacks %q:\n%s", want, out)
			}
		}
	})
}

// readmeBlock returns the first sh code block after heading in the
// repository's README.
func readmeBlock(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no %q section", heading)
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatalf("README.md section %q has no sh block", heading)
	}
	return block
}
