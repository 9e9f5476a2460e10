package filetool

import (
	"errors"

	"golang.org/x/sys/unix"
)

// mapPopulate asks mmap to map every page of the window at once rather
// than one fault at a time.
const mapPopulate = unix.MAP_POPULATE

// dataSpan returns the first span of data of the file fd in [lo, hi):
// start is hi or more when there is none, end at most hi. A file system
// that does not track holes has one span: the whole file.
func dataSpan(fd int, lo, hi int64) (start, end int64, err error) {
	start, err = unix.Seek(fd, lo, unix.SEEK_DATA)
	if errors.Is(err, unix.ENXIO) {
		return hi, hi, nil // no data from lo on
	}
	if err != nil {
		return lo, hi, nil // no SEEK_DATA here: all data
	}
	if start >= hi {
		return hi, hi, nil
	}
	end, err = unix.Seek(fd, start, unix.SEEK_HOLE)
	if err != nil || end > hi {
		end = hi
	}
	return start, end, nil
}
