//go:build unix

package dirwatch

import (
	"io/fs"
	"syscall"
)

func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino) // Ino is not uint64 on every unix
	}
	return 0
}
