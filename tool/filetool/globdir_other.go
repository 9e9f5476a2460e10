//go:build !linux

package filetool

// openScanDir opens a folder for a Glob scan: with package os outside
// Linux.
func openScanDir(prefix string) (scanDir, error) { return openOSDir(prefix) }
