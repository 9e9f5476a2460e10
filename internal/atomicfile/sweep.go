package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// SweepTemps removes temp files left in dir by crashed writers of the file
// named base: regular files named <base>.tmp.<lowercase hex> whose mtime is
// more than olderThan before now. It returns how many it removed. Choose
// olderThan well above the time any live writer needs (a minute, say), since
// a live writer's temp file looks the same. A temp file that vanishes while
// sweeping (its writer committed it) is not an error.
func SweepTemps(dir, base string, olderThan time.Duration, now time.Time) (removed int, err error) {
	if base == "" || strings.ContainsRune(base, filepath.Separator) {
		return 0, fmt.Errorf("atomicfile: sweep %s: invalid base name %q", dir, base)
	}
	return sweep(dir, func(name string) bool { return isTempName(name, base) }, olderThan, now)
}

// SweepDir is SweepTemps for the temp files of every file in dir: regular
// files named <anything>.tmp.<lowercase hex> (the temp names of WriteFile,
// of Claude Code and of os.CreateTemp(dir, base+".tmp.")) whose mtime is
// more than olderThan before now.
func SweepDir(dir string, olderThan time.Duration, now time.Time) (removed int, err error) {
	return sweep(dir, isAnyTempName, olderThan, now)
}

// SweepEntries is SweepDir over entries, dir's entries as the caller
// already read them (os.ReadDir), so that a reader of the folder sweeps it
// without reading it twice.
func SweepEntries(dir string, entries []fs.DirEntry, olderThan time.Duration, now time.Time) (removed int, err error) {
	return sweepEntries(dir, entries, isAnyTempName, olderThan, now)
}

// isAnyTempName reports whether name is <something>.tmp.<lowercase hex>.
func isAnyTempName(name string) bool {
	i := strings.LastIndex(name, tempInfix)
	return i > 0 && isTempName(name, name[:i])
}

func sweep(dir string, match func(name string) bool, olderThan time.Duration, now time.Time) (removed int, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("atomicfile: sweep %s: %w", dir, err)
	}
	return sweepEntries(dir, entries, match, olderThan, now)
}

func sweepEntries(dir string, entries []fs.DirEntry, match func(name string) bool, olderThan time.Duration, now time.Time) (removed int, err error) {
	var errs []error
	for _, e := range entries {
		if !match(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if now.Sub(fi.ModTime()) <= olderThan {
			continue
		}
		err = os.Remove(filepath.Join(dir, e.Name()))
		switch {
		case err == nil:
			removed++
		case !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("atomicfile: sweep %s: %w", dir, err)
	}
	return removed, nil
}

// isTempName reports whether name is <base>.tmp.<one or more lowercase hex
// digits>, the shape of WriteFile's (and Claude Code's) temp files.
func isTempName(name, base string) bool {
	suffix, ok := strings.CutPrefix(name, base+tempInfix)
	if !ok || suffix == "" {
		return false
	}
	for _, c := range suffix {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
