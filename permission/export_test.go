package permission

import "testing"

// FoldPaths makes paths compare as on a file system where names differ
// only in case (macOS, Windows) until t ends.
func FoldPaths(t testing.TB) {
	old := foldPaths
	foldPaths = true
	t.Cleanup(func() { foldPaths = old })
}
