//go:build unix

package hooks

import "github.com/troupe-dev/troupe/internal/proctest"

// processAlive reports whether pid runs (a zombie does not).
func processAlive(pid int) bool { return proctest.Alive(pid) }
