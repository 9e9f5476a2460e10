//go:build unix

package hooks

import (
	"os/exec"
	"syscall"
)

// setGroup starts the command in its own process group and makes a
// cancellation (its timeout) kill the whole group.
// endGroup kills what is left of the command's process group once the
// command has exited: a background child it started (a notifier, a
// logger) would otherwise outlive it, holding its pipes.
func endGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
