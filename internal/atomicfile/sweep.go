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
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("atomicfile: sweep %s: %w", dir, err)
	}
	var errs []error
	for _, e := range entries {
		if !isTempName(e.Name(), base) || !e.Type().IsRegular() {
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
