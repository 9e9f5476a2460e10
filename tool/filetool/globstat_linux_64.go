//go:build linux && (amd64 || arm64)

package filetool

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// fstatatNoFollow is fstatat(fd, e.name, st, AT_SYMLINK_NOFOLLOW). A name
// that getdents gave is passed where it lies, NUL and all, which spares
// the copy and the allocation unix.Fstatat makes of every name: one per
// file a Glob lists.
func fstatatNoFollow(fd int, e *dirEnt, st *unix.Stat_t) error {
	if !e.nul {
		return unix.Fstatat(fd, e.name, st, unix.AT_SYMLINK_NOFOLLOW)
	}
	_, _, errno := unix.Syscall6(unix.SYS_NEWFSTATAT, uintptr(fd), uintptr(unsafe.Pointer(unsafe.StringData(e.name))),
		uintptr(unsafe.Pointer(st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
