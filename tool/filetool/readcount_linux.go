package filetool

import (
	"errors"

	"golang.org/x/sys/unix"
)

// dataSpans returns the spans of data of the file fd in [0, size), in
// order, leaving out its holes. A file system that does not track holes
// has one span: the whole file.
func dataSpans(fd int, size int64) ([]span, error) {
	var spans []span
	for lo := int64(0); lo < size; {
		start, err := unix.Seek(fd, lo, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			break // no data from lo on
		}
		if err != nil {
			return []span{{lo, size}}, nil // no SEEK_DATA here: all data
		}
		if start >= size {
			break
		}
		end, err := unix.Seek(fd, start, unix.SEEK_HOLE)
		if err != nil || end > size {
			end = size
		}
		if end <= start {
			return append(spans, span{start, size}), nil // cannot happen: no endless loop if it does
		}
		spans = append(spans, span{start, end})
		lo = end
	}
	return spans, nil
}
