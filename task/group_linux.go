package task

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// groupHasLive reports whether a process of group pgid is alive and not a
// zombie, from /proc.
func groupHasLive(pgid int) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true // cannot tell: assume alive
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 3 {
			continue
		}
		if g, _ := strconv.Atoi(string(f[2])); g == pgid && string(f[0]) != "Z" {
			return true
		}
	}
	return false
}

// growPipe raises the pipe's buffer to 1 MiB (the default unprivileged
// limit), so a fast writer needs fewer wake-ups; failure is harmless.
func growPipe(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.FcntlInt(fd, unix.F_SETPIPE_SZ, 1<<20) })
	}
}
