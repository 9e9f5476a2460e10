//go:build !linux

package filetool

// dataSpans returns the whole file: holes are not looked for outside
// Linux.
func dataSpans(fd int, size int64) ([]span, error) { return []span{{0, size}}, nil }
