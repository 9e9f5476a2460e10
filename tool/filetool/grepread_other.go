//go:build !unix

package filetool

// readFD is readOS where there are no unix descriptors.
func (w *grepWorker) readFD(c Config, abs string) (content []byte, ok, large bool) {
	return w.readOS(c, abs)
}
