package file

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// readFile is os.ReadFile without updating the file's access time where
// the system allows it (O_NOATIME, for files this user owns). Task files
// are rewritten by rename, so under relatime the first read of every new
// version would otherwise write its inode: a journaled metadata update
// that, while many writers fsync, waits for the journal's commit.
func readFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNoATime, 0)
	if openNoATime != 0 && errors.Is(err, syscall.EPERM) {
		f, err = os.Open(path) // not our file: O_NOATIME is refused
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
