package procgroup

import (
	"bytes"
	"os"
	"strconv"
)

// stat reads the state and start time of pid from /proc/<pid>/stat; ok is
// false when it cannot be read (no such process).
func stat(pid int) (state byte, start uint64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime priority nice threads
	// itrealvalue starttime ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return 0, 0, false
	}
	start, err = strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], start, true
}

// groupLive reports whether a process of group pgid runs (zombies, which
// a container's init may never reap, do not count).
func groupLive(pgid int) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range ents {
		name := e.Name()
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 3 || len(f[0]) != 1 || f[0][0] == 'Z' || f[0][0] == 'X' {
			continue
		}
		if g, _ := strconv.Atoi(string(f[2])); g == pgid {
			return true
		}
	}
	return false
}
