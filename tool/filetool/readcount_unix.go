//go:build unix

package filetool

import (
	"bytes"
	"fmt"
	"os"
	"runtime/debug"

	"golang.org/x/sys/unix"
)

// countMapped maps [lo, hi) of the file fd and counts its newlines. A
// file cut shorter while mapped makes the count fault; that fault is
// caught and reported as errShrank.
func countMapped(fd int, lo, hi int64) (count int, err error) {
	page := int64(os.Getpagesize())
	at := lo &^ (page - 1)
	data, err := unix.Mmap(fd, at, int(hi-at), unix.PROT_READ, unix.MAP_SHARED|mapPopulate)
	if err != nil {
		return 0, fmt.Errorf("map the file: %w", err)
	}
	defer unix.Munmap(data)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			count, err = 0, errShrank
		}
	}()
	return bytes.Count(data[lo-at:], []byte{'\n'}), nil
}
