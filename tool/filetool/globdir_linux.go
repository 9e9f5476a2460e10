package filetool

import (
	"encoding/binary"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// linuxDir is the scanDir of Linux: getdents into a reused buffer, the
// names copied out in one string per folder, and fstatat relative to the
// open folder, so that no path is looked up from the root again.
type linuxDir struct{ fd int }

var _ scanDir = linuxDir{}

// openScanDir opens a folder for a Glob scan.
func openScanDir(prefix string) (scanDir, error) {
	for {
		fd, err := unix.Open(prefix, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: prefix, Err: err}
		}
		return linuxDir{fd: fd}, nil
	}
}

// direntBuf is how much one getdents call may fill.
const direntBuf = 32 << 10

func (d linuxDir) entries(buf *[]byte, ents []dirEnt, borrow bool) ([]dirEnt, error) {
	b := (*buf)[:0]
	for {
		if cap(b)-len(b) < direntBuf {
			b = append(b[:cap(b)], make([]byte, direntBuf)...)[:len(b)]
		}
		n, err := unix.Getdents(d.fd, b[len(b):cap(b)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			*buf = b
			return ents, err
		}
		if n <= 0 {
			break
		}
		b = b[:len(b)+n]
	}
	*buf = b
	return parseDirents(b, ents, borrow), nil
}

// parseDirents appends the entries of b, what getdents filled, to ents,
// each name followed by its NUL: all names in one new string, or, with
// borrow set, in b itself (so valid only while b is not written again).
// "." and ".." are left out. A record that does not fit ends the parse,
// and one whose name has no NUL is left out (the kernel never writes
// either).
func parseDirents(b []byte, ents []dirEnt, borrow bool) []dirEnt {
	// struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type,
	// then the name and a NUL.
	var all string
	switch {
	case len(b) == 0:
	case borrow:
		all = unsafe.String(&b[0], len(b))
	default:
		all = string(b)
	}
	for off := 0; off+19 <= len(all); {
		reclen := int(binary.NativeEndian.Uint16(b[off+16:]))
		if reclen < 20 || off+reclen > len(all) {
			break
		}
		name := all[off+19 : off+reclen]
		i := strings.IndexByte(name, 0)
		typ := b[off+18]
		off += reclen
		if i < 0 {
			continue // no NUL after the name: the kernel always writes one
		}
		name = name[:i]
		if name == "." || name == ".." || name == "" {
			continue
		}
		ents = append(ents, dirEnt{name: name, kind: direntKind(typ), nul: true})
	}
	return ents
}

// direntKind is the kind of a d_type.
func direntKind(typ byte) entKind {
	switch typ {
	case unix.DT_REG:
		return kindFile
	case unix.DT_DIR:
		return kindDir
	case unix.DT_LNK:
		return kindLink
	case unix.DT_UNKNOWN:
		return kindUnknown
	}
	return kindOther
}

func (d linuxDir) lstat(e *dirEnt) (mtime, entKind, error) {
	var st unix.Stat_t
	for {
		err := fstatatNoFollow(d.fd, e, &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return noTime, kindOther, err
		}
		return mtime{sec: int64(st.Mtim.Sec), nsec: int64(st.Mtim.Nsec)}, statKind(st.Mode), nil
	}
}

// statKind is the kind of a st_mode.
func statKind(mode uint32) entKind {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return kindFile
	case unix.S_IFDIR:
		return kindDir
	case unix.S_IFLNK:
		return kindLink
	}
	return kindOther
}

func (d linuxDir) regular(name string) bool {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(d.fd, name, &st, 0)
		if err == unix.EINTR {
			continue
		}
		return err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG
	}
}

func (d linuxDir) close() { unix.Close(d.fd) }
