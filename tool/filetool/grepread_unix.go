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
	return w.fill(st.Size, func(p []byte) (int, error) {
		return retryEINTR(func() (int, error) { return unix.Read(fd, p) })
	})
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
