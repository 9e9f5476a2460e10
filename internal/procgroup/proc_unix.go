//go:build unix

package procgroup

import "syscall"

// running reports whether process pid runs and is the one that started
// at start (0: any); a zombie has ended.
func running(pid int, start uint64) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	st, s, ok := stat(pid)
	if !ok {
		return true // no /proc here: kill(0) is all there is
	}
	return st != 'Z' && st != 'X' && (start == 0 || s == 0 || s == start)
}

// killGroup sends SIGKILL to process group pgid, unless its leader's pid
// now belongs to a process started later than the one recorded (the
// group ended and the number was given out again).
func killGroup(pgid int, start uint64) {
	if pgid <= 1 {
		return
	}
	if _, s, ok := stat(pgid); ok && start != 0 && s != 0 && s != start {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// killProcess sends SIGKILL to pid.
func killProcess(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }

// startTime returns when pid started (clock ticks since boot), 0 when
// unknown.
func startTime(pid int) uint64 {
	_, s, _ := stat(pid)
	return s
}
