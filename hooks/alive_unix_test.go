//go:build unix

package hooks

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// processAlive reports whether pid runs; a zombie (killed, not yet reaped
// by its new parent) does not.
func processAlive(pid int) bool {
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
