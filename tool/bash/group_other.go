//go:build unix && !linux

package bash

import "syscall"

// groupAlive reports whether process group pgid has a member.
func groupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
