//go:build !unix

package mcp

import "os/exec"

// setGroup leaves the default: process groups are a Unix facility.
func setGroup(*exec.Cmd) {}

// endGroup does nothing where there are no process groups.
func endGroup(*exec.Cmd) {}
