//go:build !unix

package hooks

import "os/exec"

// setGroup leaves the default: process groups are a Unix facility, so a
// timeout kills the shell only.
func setGroup(*exec.Cmd) {}

// endGroup does nothing where there are no process groups.
func endGroup(*exec.Cmd) {}
