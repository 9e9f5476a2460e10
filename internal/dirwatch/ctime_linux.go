package dirwatch

import (
	"io/fs"
	"syscall"
)

// ctime returns fi's inode change time in nanoseconds (0 when unknown). A
// writer can set the mtime back, or rewrite a file in place within the
// mtime's granularity; the change time still moves.
func ctime(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}
