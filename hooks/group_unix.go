//go:build unix

package hooks

import (
	"os/exec"
	"syscall"
)

// setGroup starts the command in its own process group and makes a
// cancellation (its timeout) kill the whole group.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
