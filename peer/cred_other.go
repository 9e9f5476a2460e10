//go:build !linux

package peer

import (
	"errors"
	"net"
)

// peerUID cannot tell the peer's uid here: the default check then refuses
// every connection (the socket is 0600 in a 0700 folder all the same).
func peerUID(*net.UnixConn) (int, error) {
	return -1, errors.New("peer credentials are only read on Linux")
}
