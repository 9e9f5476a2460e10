package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// slowScript is a scripted model whose first answer takes ten minutes:
// a run is in its model call until a signal stops it.
const slowScript = `{"turns":[{"match":{},"reply":{"text":"too late","delay_ms":600000},"repeat":true}]}`

// exitOf waits for c and returns its exit status (-1: killed by a signal).
func exitOf(t *testing.T, c *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(60 * time.Second):
		c.Process.Kill()
		t.Fatal("troupe did not end within 60 s of the signal")
		return 0
	}
}

// SIGINT and SIGTERM stop a headless run in its model call with exit
// status 130 and 143 and "interrupted" on stderr, not exit 1 with
// "context canceled".
func TestHeadlessSignalExit(t *testing.T) {
	for _, tt := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			work := t.TempDir()
			script := filepath.Join(work, "script.json")
			writeFile(t, script, slowScript)
			c := exec.CommandContext(t.Context(), os.Args[0], "-p", "--trust", "--home", filepath.Join(work, "home"), "--cwd", work,
				"--provider", "scripted", "--script", script, "--output-format", "stream-json", "go")
			c.Env = append(os.Environ(), asTroupeEnv+"=1", "HOME="+work)
			var stderr bytes.Buffer
			c.Stderr = &stderr
			stdout, err := c.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			// The init line comes before the model call.
			if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.Contains(line, `"subtype":"init"`) {
				c.Process.Kill()
				t.Fatalf("first line %q, %v; want the init line", line, err)
			}
			go func() { _, _ = bufio.NewReader(stdout).WriteTo(new(bytes.Buffer)) }()
			if err := c.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			if code := exitOf(t, c); code != tt.code {
				t.Errorf("exit status %d; want %d (stderr %q)", code, tt.code, stderr.String())
			}
			if s := stderr.String(); !strings.Contains(s, "troupe: interrupted") || strings.Contains(s, "context canceled") {
				t.Errorf("stderr %q; want \"troupe: interrupted\" and no \"context canceled\"", s)
			}
		})
	}
}

// A pane teammate stopped by SIGTERM or SIGINT exits 143 or 130 saying
// it was interrupted.
func TestTeammateSignalExit(t *testing.T) {
	for _, tt := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			home, work := t.TempDir(), t.TempDir()
			script := filepath.Join(work, "script.json")
			writeFile(t, script, slowScript)
			run := func(args ...string) string {
				t.Helper()
				var out bytes.Buffer
				m := &Main{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }}
				if err := m.Run(t.Context(), append([]string{"--home", home}, args...)); err != nil {
					t.Fatalf("troupe %s: %v\n%s", strings.Join(args, " "), err, out.String())
				}
				return out.String()
			}
			run("team", "create", "t")
			run("team", "add", "t", "helper")
			run("inbox", "send", "--team", "t", "--from", "team-lead", "--to", "helper", "start working")
			c := exec.CommandContext(t.Context(), os.Args[0], "--home", home, "--agent-id", "helper@t", "--agent-name", "helper", "--team-name", "t",
				"--cwd", work, "--provider", "scripted", "--script", script)
			c.Env = append(os.Environ(), asTroupeEnv+"=1", "HOME="+work)
			var stderr bytes.Buffer
			c.Stderr = &stderr
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			logFile := filepath.Join(home, "logs", "t", "helper.log")
			deadline := time.Now().Add(30 * time.Second)
			for {
				if b, _ := os.ReadFile(logFile); bytes.Contains(b, []byte("joined team")) {
					break
				}
				if time.Now().After(deadline) {
					c.Process.Kill()
					t.Fatalf("the teammate did not join within 30 s; stderr %q", stderr.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := c.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			if code := exitOf(t, c); code != tt.code {
				b, _ := os.ReadFile(logFile)
				t.Errorf("exit status %d; want %d (stderr %q, log %q)", code, tt.code, stderr.String(), b)
			}
			if s := stderr.String(); !strings.Contains(s, "troupe: interrupted") {
				t.Errorf("stderr %q; want \"troupe: interrupted\"", s)
			}
		})
	}
}

// The interactive lead stopped by SIGTERM or SIGINT (from outside: in the
// terminal Ctrl+C is a key) in a model call exits 143 or 130 saying it was
// interrupted.
func TestTUISignalExit(t *testing.T) {
	for _, tt := range []struct {
		sig  syscall.Signal
		code string
	}{{syscall.SIGINT, "EXITED 130"}, {syscall.SIGTERM, "EXITED 143"}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			script := filepath.Join(dir, "script.json")
			writeFile(t, script, slowScript)
			args := []string{"--provider", "scripted", "--script", script}
			p := startTUI(t, dir, []string{"TROUPE_HOME=" + filepath.Join(dir, "home"), "HOME=" + dir}, args...)
			p.submit("go")
			p.wait("Esc to interrupt", 10*time.Second)
			pids := processesWith(append([]string{os.Args[0]}, args...)...)
			if len(pids) != 1 {
				t.Fatalf("troupe's processes: %q; want one", pids)
			}
			pid, _ := strconv.Atoi(pids[0])
			if err := syscall.Kill(pid, tt.sig); err != nil {
				t.Fatal(err)
			}
			p.wait(tt.code, 40*time.Second)
			b, _ := os.ReadFile(filepath.Join(dir, "troupe.err"))
			if !strings.Contains(string(b), "troupe: interrupted") {
				t.Errorf("stderr %q; want \"troupe: interrupted\"", b)
			}
		})
	}
}
