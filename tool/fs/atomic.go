package fs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/troupe-dev/troupe/internal/atomicfile"
)

// writeAtomic replaces path with data through internal/atomicfile (temp
// file, fsync, rename), so that a reader sees the old content or the new,
// never a mix, and a failure leaves the old content. An existing file keeps
// its mode; a new one gets 0666 less the umask. A symbolic link is written
// through (its target is replaced). hook, when non-nil, runs just before
// the rename and can make the write fail (tests).
func writeAtomic(path string, data []byte, hook func() error) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	var opts atomicfile.Options
	var hookErr error
	if hook != nil {
		opts.BeforeCommit = func() error { hookErr = hook(); return hookErr }
	}
	perm := fs.FileMode(0o666)
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			return errors.New("not a regular file")
		}
		perm = st.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		opts.ExactMode = true
	}
	err := atomicfile.WriteFile(path, data, perm, opts)
	if hookErr != nil {
		return hookErr
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err // the messages already name the path
	}
	return err
}
