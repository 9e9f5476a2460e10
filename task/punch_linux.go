package task

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// punchHead gives back to the file system the disk blocks of f's bytes
// [from, to), keeping the file's size and every later offset as they are
// (the range reads as zeros). It fails on a file system that cannot punch
// holes.
func punchHead(f *os.File, from, to int64) error {
	return unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, from, to-from)
}

// dataStart returns the offset of f's first byte that was not given back
// by punchHead: its first data, size when it has none. A file system
// without holes reports 0.
func dataStart(f *os.File, size int64) int64 {
	off, err := unix.Seek(int(f.Fd()), 0, unix.SEEK_DATA)
	switch {
	case errors.Is(err, unix.ENXIO):
		return size // all hole
	case err != nil:
		return 0
	}
	return min(off, size)
}
