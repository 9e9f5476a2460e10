package lockfile

import (
	"fmt"
	"io/fs"
	"os"
	"time"
)

// ident identifies one lock directory at one refresh: a reclaimer or holder
// compares all three fields, since a new directory may reuse a removed
// one's inode number.
type ident struct {
	dev, ino uint64
	mtime    int64 // ns since the Unix epoch
}

func identOf(fi fs.FileInfo) ident {
	dev, ino := devIno(fi)
	return ident{dev: dev, ino: ino, mtime: fi.ModTime().UnixNano()}
}

func (id ident) modTime() time.Time { return time.Unix(0, id.mtime) }

// sameDir reports whether id and other are the same directory, whatever
// their mtimes.
func (id ident) sameDir(other ident) bool { return id.dev == other.dev && id.ino == other.ino }

func (id ident) String() string {
	return fmt.Sprintf("inode %d mtime %s", id.ino, id.modTime().Format(time.RFC3339Nano))
}

// statIdent returns the ident of the lock directory at path (not following
// a symlink). Anything but a directory there is an error, so that a file
// passed by mistake (the lock's target, say) is never reclaimed.
func statIdent(path string) (ident, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return ident{}, err
	}
	if !fi.IsDir() {
		return ident{}, fmt.Errorf("%s exists and is not a lock directory", path)
	}
	return identOf(fi), nil
}
