package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Identity identifies one version of a file: which file (device, inode) the
// path named and its size and modification and change times. Identities are
// comparable with ==: equal Identities mean the path still names the same,
// unmodified file (a rename-over gives a new inode; an in-place write
// changes the size, mtime or ctime). The zero Identity (Exists false) stands
// for a missing file.
type Identity struct {
	Exists bool
	Dev    uint64
	Ino    uint64
	Size   int64
	// MtimeNs is the modification time in nanoseconds since the Unix epoch.
	MtimeNs int64
	// CtimeNs is the inode change time in nanoseconds since the Unix epoch
	// (0 where the platform does not report it). Unlike the mtime it cannot
	// be set back by a writer, so it also catches in-place rewrites that
	// restore the mtime.
	CtimeNs int64
}

// Stat returns the Identity of the file at path, following symlinks. A
// missing file is not an error: it gives the zero Identity and a nil error.
func Stat(path string) (Identity, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Identity{}, nil
	}
	if err != nil {
		return Identity{}, fmt.Errorf("atomicfile: stat %s: %w", path, err)
	}
	return identityOf(fi), nil
}

// identityOf builds an Identity from a FileInfo; sysIdentity fills in the
// platform-specific fields.
func identityOf(fi fs.FileInfo) Identity {
	id := Identity{
		Exists:  true,
		Size:    fi.Size(),
		MtimeNs: fi.ModTime().UnixNano(),
	}
	sysIdentity(fi, &id)
	return id
}
