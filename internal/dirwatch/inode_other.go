//go:build !unix

package dirwatch

import "io/fs"

// inode is unknown here; polling then compares size, mtime and mode.
func inode(fs.FileInfo) uint64 { return 0 }
