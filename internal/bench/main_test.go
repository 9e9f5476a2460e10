package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"
)

// childEnv makes the test binary play a bench child (RunChild with its
// last argument) instead of running the tests.
const childEnv = "TROUPE_BENCH_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := RunChild(context.Background(), os.Args[len(os.Args)-1], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// execStart is the StartFunc of the tests (cmd/troupe has its own).
func execStart(ctx context.Context, s Spec) (Process, error) {
	c := exec.CommandContext(ctx, s.Path, s.Args...)
	if len(s.Env) > 0 {
		c.Env = append(os.Environ(), s.Env...)
	}
	c.Dir = s.Dir
	if s.Stdin != nil {
		c.Stdin = s.Stdin
	}
	if s.Stdout != nil {
		c.Stdout = s.Stdout
	}
	if s.Stderr != nil {
		c.Stderr = s.Stderr
	}
	c.ExtraFiles = s.ExtraFiles
	c.WaitDelay = 5 * time.Second
	if err := c.Start(); err != nil {
		return nil, err
	}
	return execProcess{c}, nil
}

type execProcess struct{ c *exec.Cmd }

func (p execProcess) Wait() (*os.ProcessState, error) {
	err := p.c.Wait()
	return p.c.ProcessState, err
}

func (p execProcess) Kill() error { return p.c.Process.Kill() }

// testRunner runs children from the test binary; progress goes to the test
// log.
func testRunner(t *testing.T) *Runner {
	t.Helper()
	return &Runner{
		Exe:           os.Args[0],
		ChildEnv:      []string{childEnv + "=1"},
		Start:         execStart,
		TempDir:       t.TempDir(),
		Progress:      testWriter{t},
		ProgressEvery: 200 * time.Millisecond,
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p[:len(p)-min(len(p), 1)]))
	return len(p), nil
}

var _ io.Writer = testWriter{}
