//go:build unix

package filetool

import (
	"fmt"
	"math"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of the file fd from off (a multiple of the page
// size) on, for reading. The
// pages are not read in ahead: touching them maps them, and on Linux a
// page cache that holds the file in large folios maps them 2 MiB at a
// time.
func mapFile(fd int, off, size int64) ([]byte, error) {
	if size > math.MaxInt {
		return nil, fmt.Errorf("map the file: %d bytes do not fit in memory here", size)
	}
	data, err := unix.Mmap(fd, off, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map the file: %w", err)
	}
	return data, nil
}

func unmapFile(data []byte) { unix.Munmap(data) }
