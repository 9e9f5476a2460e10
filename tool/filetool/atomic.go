package filetool

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/troupe-dev/troupe/internal/realpath"
)

// writeAtomic replaces abs with data (its parts, one after the other: an
// edit writes what it keeps of the old content without copying it), so that a reader sees the old
// content or the new, never a mix, and a failure leaves the old content:
// a temp file in the same folder, fsynced, then renamed over the file. An
// existing file keeps its mode; a new one gets 0666 less the umask.
//
// A symbolic link is written through: the write goes where abs really
// points (its missing folders are created there). The real path is shown
// to Config.Confine first; then the folder is opened and the temp file
// created, checked and renamed relative to that open folder (os.Root), so
// a link swapped in afterwards cannot redirect the write: the folder's
// real path is checked again once open, and a name that has become a link
// is refused rather than followed. name is the tool's name, for Confine;
// hook, when non-nil, runs just before the rename and can make the write
// fail (tests). A Confine refusal wraps errConfined.
func (c Config) writeAtomic(name, abs string, hook func() error, data ...[]byte) error {
	target := realpath.Resolve(abs)
	if err := c.confineErr(name, abs, target); err != nil {
		return err
	}
	dir, base := filepath.Dir(target), filepath.Base(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &mkdirError{abs: abs, err: unwrapPath(err)}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return unwrapPath(err)
	}
	defer root.Close()
	d, err := root.Open(".")
	if err != nil {
		return unwrapPath(err)
	}
	defer d.Close()
	if c.Confine != nil {
		realDir, err := openedPath(d)
		if err != nil {
			return fmt.Errorf("%w: cannot tell where %s really is: %v", errConfined, dir, unwrapPath(err))
		}
		if realDir != dir {
			if err := c.confineErr(name, abs, filepath.Join(realDir, base)); err != nil {
				return err
			}
		}
	}
	perm, exact := fs.FileMode(0o666), false
	if st, err := root.Lstat(base); err == nil {
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%w: %s became a symbolic link while it was written", errConfined, target)
		case !st.Mode().IsRegular():
			return errors.New("not a regular file")
		}
		perm, exact = st.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky), true
	}
	tmp, f, err := createTemp(root, base, perm)
	if err != nil {
		return unwrapPath(err)
	}
	committed := false
	defer func() {
		if !committed {
			f.Close()
			root.Remove(tmp) // best effort: the file is untouched either way
		}
	}()
	if exact {
		if err := f.Chmod(perm); err != nil {
			return unwrapPath(err)
		}
	}
	for _, part := range data { // the parts of the content, in order
		if _, err := f.Write(part); err != nil {
			return unwrapPath(err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync: %w", unwrapPath(err))
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close: %w", unwrapPath(err))
	}
	if hook != nil {
		if err := hook(); err != nil {
			return err
		}
	}
	if err := root.Rename(tmp, base); err != nil {
		return unwrapPath(err)
	}
	committed = true
	d.Sync() // best effort: the rename is done
	return nil
}

// createTemp creates a new temp file beside base in root.
func createTemp(root *os.Root, base string, perm fs.FileMode) (string, *os.File, error) {
	for range 10 {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", nil, err
		}
		name := base + ".tmp." + hex.EncodeToString(b[:])
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return name, f, err
	}
	return "", nil, errors.New("cannot create a temp file")
}

// mkdirError is a failure to create the folder of the file abs.
type mkdirError struct {
	abs string
	err error
}

func (e *mkdirError) Error() string {
	return fmt.Sprintf("cannot create the directory of %s: %v", e.abs, e.err)
}

func (e *mkdirError) Unwrap() error { return e.err }
