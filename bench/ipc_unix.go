//go:build unix

package bench

import (
	"fmt"
	"os"
	"syscall"
)

// ipcPair returns a connected pair of Unix stream sockets for Node's IPC
// channel: ours (non-blocking, close-on-exec) and the child's end.
func ipcPair() (ours, theirs *os.File, err error) {
	syscall.ForkLock.RLock() // no fork may inherit the pair before close-on-exec is set
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, nil, fmt.Errorf("ipc socket pair: %w", err)
	}
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return nil, nil, fmt.Errorf("ipc socket pair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "ipc"), os.NewFile(uintptr(fds[1]), "ipc-child"), nil
}
