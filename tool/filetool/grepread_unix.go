//go:build unix

package filetool

import "golang.org/x/sys/unix"

// readFD is read for a search without Confine, on the bare descriptor:
// an *os.File costs a file a few more system calls (its registration
// with the poller, a finalizer), and a search opens thousands. The file
// is opened non-blocking, so that a pipe put in its place cannot hang
// the search, and read in one call when it has the size fstat gave.
func (w *grepWorker) readFD(_ Config, abs string) (content []byte, ok, large bool) {
	fd, err := retryEINTR(func() (int, error) {
		return unix.Open(abs, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	})
	if err != nil {
		return nil, false, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, false, false
	}
	if st.Size > maxGrepFile {
		return nil, false, true
	}
	// One byte more than the size, to see the end in one read.
	if want := int(st.Size) + 1; cap(w.buf) < want {
		w.buf = make([]byte, max(want, 64<<10))
	}
	buf := w.buf[:cap(w.buf)]
	n := 0
	for {
		if n == len(buf) { // the file grew
			if n > maxGrepFile {
				return nil, false, false
			}
			grown := make([]byte, min(2*len(buf), maxGrepFile+1))
			copy(grown, buf)
			buf, w.buf = grown, grown
		}
		m, err := retryEINTR(func() (int, error) { return unix.Read(fd, buf[n:]) })
		if err != nil {
			return nil, false, false
		}
		n += m
		// A read short of what was asked, at the size fstat gave, has
		// met the end: no need for one more read to hear it.
		if m == 0 || n == int(st.Size) && n < len(buf) {
			break
		}
	}
	return searchable(buf[:n])
}

// retryEINTR calls f again while it is interrupted by a signal.
func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != unix.EINTR {
			return n, err
		}
	}
}
