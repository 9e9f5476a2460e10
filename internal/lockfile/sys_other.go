//go:build !linux && !darwin

package lockfile

import (
	"errors"
	"io/fs"
	"os"
)

// renameNoReplace is unsupported here; a reclaimer that moved a live lock
// then removes it, and the victim's Verify fails (safe, but not quiet).
func renameNoReplace(from, to string) error {
	return &os.LinkError{Op: "rename", Old: from, New: to, Err: errors.ErrUnsupported}
}

// devIno is unknown here; identities then rest on the mtime alone.
func devIno(fs.FileInfo) (dev, ino uint64) { return 0, 0 }
