//go:build unix

// Package procgroup runs a command in a process group of its own, so that
// what it starts (a background child, a server's helpers) ends with it.
package procgroup

import (
	"os/exec"
	"syscall"
)

// Set makes cmd start in a process group of its own, led by it.
func Set(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// Started records the group of cmd, just started, in the process's
// ledger (Keep), until Kill.
func Started(cmd *exec.Cmd) {
	if cmd.Process != nil {
		Track(cmd.Process.Pid)
	}
}

// Kill sends SIGKILL to every process of the group cmd leads (none when
// cmd has not started), and forgets the group in the process's ledger.
// Once cmd has exited it ends what it left running.
func Kill(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if l := kept.Load(); l != nil {
		_ = l.Remove(cmd.Process.Pid)
	}
	return err
}
