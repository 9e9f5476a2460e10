// Package realpath resolves the symbolic links of a path, including a path
// that does not exist yet: the permission policy and the file tools use it
// to judge a path where it really points.
//
// Resolve is safe for concurrent use. Its answer describes the file system
// at the moment it looks; callers that open the path afterwards check what
// they opened (the file tools compare the real path of the opened file).
package realpath

import (
	"os"
	"path/filepath"
)

// maxLinks bounds how many dangling links Resolve follows by hand, as the
// kernel bounds link chains (ELOOP).
const maxLinks = 40

// Resolve returns the absolute, clean path abs with its symbolic links
// resolved. When abs does not exist, its deepest existing ancestor is
// resolved and the rest appended; a dangling link on the way is followed
// to where it points, since creating the path would create its target.
// A relative abs is made absolute against the working directory.
func Resolve(abs string) string {
	if a, err := filepath.Abs(abs); err == nil {
		abs = a
	}
	return resolve(filepath.Clean(abs), 0)
}

func resolve(p string, links int) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if links < maxLinks {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if t, err := os.Readlink(p); err == nil {
				if !filepath.IsAbs(t) {
					t = filepath.Join(filepath.Dir(p), t)
				}
				return resolve(filepath.Clean(t), links+1)
			}
		}
	}
	dir := filepath.Dir(p)
	if dir == p {
		return p
	}
	return filepath.Join(resolve(dir, links), filepath.Base(p))
}

// Stat reports whether abs exists and whether it is a folder, following
// links: permission.Policy.Stat, which tells git repositories apart.
func Stat(abs string) (exists, dir bool) {
	fi, err := os.Stat(filepath.FromSlash(abs))
	if err != nil {
		return false, false
	}
	return true, fi.IsDir()
}
