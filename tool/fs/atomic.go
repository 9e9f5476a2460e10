package fs

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// writeAtomic replaces path with data: it writes a temp file in path's
// directory, fsyncs it and renames it over path, so that a reader sees the
// old content or the new, never a mix, and a failure leaves the old content.
// An existing file keeps its mode; a new one gets 0666 less the umask. A
// symbolic link is written through (its target is replaced). hook, when
// non-nil, runs just before the rename and can make the write fail (tests).
func writeAtomic(path string, data []byte, hook func(tmp string) error) (err error) {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	var mode fs.FileMode
	exists := false
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			return errors.New("not a regular file")
		}
		exists = true
		mode = st.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	}
	f, tmp, err := createTemp(path)
	if err != nil {
		return unwrapPath(err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if exists {
		if err := f.Chmod(mode); err != nil {
			return unwrapPath(err)
		}
	}
	if _, err := f.Write(data); err != nil {
		return unwrapPath(err)
	}
	if err := f.Sync(); err != nil {
		return unwrapPath(err)
	}
	if err := f.Close(); err != nil {
		return unwrapPath(err)
	}
	if hook != nil {
		if err := hook(tmp); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return unwrapPath(err)
	}
	syncDir(filepath.Dir(path))
	return nil
}

// createTemp creates a new, empty temp file beside path, named
// .<base>.tmp<random>, with mode 0666 less the umask (as os.WriteFile
// would create path).
func createTemp(path string) (*os.File, string, error) {
	dir, base := filepath.Split(path)
	base = cutUTF8(base, 200) // leave room under NAME_MAX
	for range 10 {
		name := filepath.Join(dir, fmt.Sprintf(".%s.tmp%08x", base, rand.Uint32()))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", errors.New("cannot create a unique temp file")
}

// syncDir fsyncs a directory so that a rename in it is durable; failures
// (some file systems cannot) are ignored: the content is in place.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
