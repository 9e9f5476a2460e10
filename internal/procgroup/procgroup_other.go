//go:build !unix

// Package procgroup runs a command in a process group of its own, so that
// what it starts (a background child, a server's helpers) ends with it.
// Process groups are a Unix facility: here Set leaves the default and
// Kill ends cmd's own process only.
package procgroup

import "os/exec"

// Set leaves cmd as it is.
func Set(*exec.Cmd) {}

// Started records nothing: there are no groups to record.
func Started(*exec.Cmd) {}

// Kill kills cmd's own process (none when it has not started).
func Kill(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
