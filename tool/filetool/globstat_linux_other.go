//go:build linux && !(amd64 || arm64)

package filetool

import "golang.org/x/sys/unix"

// fstatatNoFollow is fstatat(fd, e.name, st, AT_SYMLINK_NOFOLLOW).
func fstatatNoFollow(fd int, e *dirEnt, st *unix.Stat_t) error {
	return unix.Fstatat(fd, e.name, st, unix.AT_SYMLINK_NOFOLLOW)
}
