//go:build !linux

package file

// openNoATime is zero where open has no O_NOATIME.
const openNoATime = 0
