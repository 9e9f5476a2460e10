//go:build !unix

package bench

import (
	"errors"
	"os"
)

func ipcPair() (ours, theirs *os.File, err error) {
	return nil, nil, errors.New("node IPC channel: needs a Unix system")
}
