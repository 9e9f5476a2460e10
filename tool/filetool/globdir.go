package filetool

import (
	iofs "io/fs"
	"os"
	"path/filepath"
)

// sepString is the path separator as a string.
const sepString = string(filepath.Separator)

// osDir is the portable scanDir, on package os: each entry's lstat takes
// its whole path.
type osDir struct {
	f      *os.File
	prefix string // the folder's path with a separator after it
}

var _ scanDir = (*osDir)(nil)

// openOSDir opens the folder whose path, with a separator after it, is
// prefix.
func openOSDir(prefix string) (scanDir, error) {
	f, err := os.Open(prefix)
	if err != nil {
		return nil, err
	}
	return &osDir{f: f, prefix: prefix}, nil
}

func (d *osDir) entries(_ *[]byte, ents []dirEnt, _ bool) ([]dirEnt, error) {
	list, err := d.f.ReadDir(-1)
	if err != nil {
		return ents, err
	}
	for _, e := range list {
		ents = append(ents, dirEnt{name: e.Name(), kind: modeKind(e.Type())})
	}
	return ents, nil
}

func (d *osDir) lstat(e *dirEnt) (mtime, entKind, error) {
	st, err := os.Lstat(d.prefix + e.name)
	if err != nil {
		return noTime, kindOther, err
	}
	t := st.ModTime()
	return mtime{sec: t.Unix(), nsec: int64(t.Nanosecond())}, modeKind(st.Mode().Type()), nil
}

func (d *osDir) regular(name string) bool {
	st, err := os.Stat(d.prefix + name)
	return err == nil && st.Mode().IsRegular()
}

func (d *osDir) close() { d.f.Close() }

// modeKind is the kind of an entry of type mode.
func modeKind(mode iofs.FileMode) entKind {
	switch {
	case mode.IsRegular():
		return kindFile
	case mode.IsDir():
		return kindDir
	case mode&iofs.ModeSymlink != 0:
		return kindLink
	}
	return kindOther
}
