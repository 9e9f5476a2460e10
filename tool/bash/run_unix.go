//go:build unix

package bash

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/troupe-dev/troupe/internal/gitenv"
	"github.com/troupe-dev/troupe/internal/procgroup"
	"github.com/troupe-dev/troupe/tool"
)

// drainWait bounds how long the output pipe is read after the command's
// process group is gone: a process that left the group may hold it open.
const drainWait = 500 * time.Millisecond

// run runs command in its own process group and reports its output and
// exit status.
func (t *Tool) run(ctx context.Context, command string, timeout time.Duration) (tool.Result, error) {
	cmd := exec.Command(t.cfg.Shell, "-c", command)
	cmd.Dir = t.cfg.Dir
	cmd.Env = gitenv.Env(t.cfg.Env) // no repository's fsmonitor or hooks run
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r, w, err := os.Pipe()
	if err != nil {
		return tool.Errorf("Bash: cannot create the output pipe: %v", err), nil
	}
	defer r.Close()
	// One pipe for both, so that the output interleaves as written.
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		w.Close()
		return tool.Errorf("Bash: cannot start %s in %s: %v", t.cfg.Shell, t.cfg.Dir, err), nil
	}
	w.Close()
	pgid := cmd.Process.Pid
	// In the process's ledger until the group is gone: if this process
	// dies first, whoever reaps it kills the group (procgroup.Reap).
	forget := procgroup.Track(pgid)

	out := newCapture(t.cfg.MaxOutput)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		io.Copy(out, r) // ends at EOF, or when the read deadline passes
	}()
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var (
		waitErr  error
		timedOut bool
		canceled bool
	)
	select {
	case waitErr = <-waitDone:
	case <-timer.C:
		timedOut = true
	case <-ctx.Done():
		canceled = true
	}
	// Whether the shell finished or not, nothing of its group may stay.
	killed := killGroup(pgid, t.cfg.KillGrace)
	forget()
	if timedOut || canceled {
		waitErr = <-waitDone
	}
	select {
	case <-readDone:
	case <-time.After(drainWait):
		r.SetReadDeadline(time.Now())
		<-readDone
	}

	var b strings.Builder
	text := out.String()
	if text == "" {
		b.WriteString("(no output)\n")
	} else {
		b.WriteString(text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
	}
	res := tool.Result{}
	switch {
	case timedOut:
		fmt.Fprintf(&b, "\nCommand timed out after %v; it was killed, with every process it started (%s).", timeout, killed)
		res.IsError = true
	case canceled:
		fmt.Fprintf(&b, "\nCommand canceled; it was killed, with every process it started (%s).", killed)
		res.IsError = true
	default:
		code, desc := exitStatus(waitErr)
		if desc != "" {
			fmt.Fprintf(&b, "\n%s", desc)
		} else {
			fmt.Fprintf(&b, "\nExit code: %d", code)
		}
		res.IsError = code != 0
		if killed != noneLeft {
			fmt.Fprintf(&b, "\n[Processes the command left running were killed (%s): nothing outlives a call, and run_in_background is not available yet.]", killed)
		}
	}
	res.Content = b.String()
	if canceled {
		return res, fmt.Errorf("bash: %w", context.Cause(ctx))
	}
	return res, nil
}

// exitStatus returns a finished shell's exit code, and a description when
// it did not exit normally.
func exitStatus(err error) (int, string) {
	if err == nil {
		return 0, ""
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return -1, fmt.Sprintf("Command failed: %v", err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig := ws.Signal()
		return 128 + int(sig), fmt.Sprintf("Command killed by signal %d (%v); exit code %d", int(sig), sig, 128+int(sig))
	}
	return ee.ExitCode(), ""
}

// noneLeft is killGroup's report when the group was already empty.
const noneLeft = "no process was left"

// killGroup makes sure no process of group pgid stays: it sends SIGTERM,
// waits up to grace for the group to go, then sends SIGKILL. It returns
// what it did, for the report.
func killGroup(pgid int, grace time.Duration) string {
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil {
		return noneLeft
	}
	deadline := time.Now().Add(grace)
	for delay := time.Millisecond; time.Now().Before(deadline); delay = min(2*delay, 50*time.Millisecond) {
		if !groupAlive(pgid) {
			return "by SIGTERM"
		}
		time.Sleep(delay)
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil {
		return "by SIGTERM"
	}
	return fmt.Sprintf("by SIGTERM, then SIGKILL after %v", grace)
}
