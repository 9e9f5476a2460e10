//go:build unix

// Package proctest tells tests whether a process they started, or one it
// left behind, still runs.
package proctest

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Alive reports whether process pid runs; a zombie (ended, not yet reaped
// by its new parent, as in a container whose init does not reap) does
// not.
func Alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc here: kill(0) is all there is
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// WaitGone waits up to within for process pid to end (a kill takes the
// kernel a moment) and reports whether it did.
func WaitGone(pid int, within time.Duration) bool {
	for deadline := time.Now().Add(within); Alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// PID returns the process id written to file, waiting up to 5 s for it to
// be written.
func PID(t testing.TB, file string) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(file); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process id in %s within 5 s", file)
		}
	}
}
