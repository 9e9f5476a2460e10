// Package fileedit changes a small file (a settings or configuration
// file) that several processes may edit at once: under a lock directory
// beside it, the current content is read, changed by a function, and
// replaced atomically, so that concurrent edits never lose each other and
// a failed one leaves the file as it was.
package fileedit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/troupe-dev/troupe/internal/atomicfile"
	"github.com/troupe-dev/troupe/internal/lockfile"
)

// Edit locks path (with <path>.lock), reads it (nil when it does not
// exist yet), and writes what change returns in its place, keeping the
// file's mode (newMode for a new file; its folder is created). A nil
// result from change leaves the file untouched; an error from change is
// returned as it is, the file untouched.
func Edit(ctx context.Context, path string, newMode fs.FileMode, change func(data []byte) ([]byte, error)) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("edit %s: %w", path, err)
	}
	lock, err := lockfile.Acquire(ctx, path+".lock", lockfile.Options{})
	if err != nil {
		return fmt.Errorf("edit %s: lock: %w", path, err)
	}
	defer func() {
		if rerr := lock.Release(); rerr != nil && err == nil {
			err = fmt.Errorf("edit %s: unlock: %w", path, rerr)
		}
	}()
	mode := newMode
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data = nil
	case err != nil:
		return fmt.Errorf("edit %s: %w", path, err)
	default:
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	out, err := change(data)
	if err != nil || out == nil {
		return err
	}
	if err := atomicfile.WriteFile(path, out, mode, atomicfile.Options{BeforeCommit: lock.Verify}); err != nil {
		return fmt.Errorf("edit %s: %w", path, err)
	}
	return nil
}
