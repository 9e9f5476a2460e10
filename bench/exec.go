package bench

import (
	"context"
	"os"
	"os/exec"
	"time"
)

// ExecStart is the StartFunc that runs children as real processes.
func ExecStart(ctx context.Context, s Spec) (Process, error) {
	c := exec.CommandContext(ctx, s.Path, s.Args...)
	if len(s.Env) > 0 {
		c.Env = append(os.Environ(), s.Env...)
	}
	c.Dir = s.Dir
	// A nil *os.File must stay a nil io.Reader/io.Writer (the null device).
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

// execProcess is a started Process.
type execProcess struct{ c *exec.Cmd }

func (p execProcess) Wait() (*os.ProcessState, error) {
	err := p.c.Wait()
	return p.c.ProcessState, err
}

func (p execProcess) Kill() error { return p.c.Process.Kill() }
