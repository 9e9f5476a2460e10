package task

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// OutputDir returns, and creates with mode 0700, the output folder of a
// session: <temp>/troupe-<uid>/<project>/<session>/tasks. temp "" means
// os.TempDir(). The per-user folder must be a directory owned by the
// current user (not a symlink another user planted in a shared /tmp).
func OutputDir(temp, project, session string) (string, error) {
	if temp == "" {
		temp = os.TempDir()
	}
	for _, part := range []string{project, session} {
		if part == "" || part == "." || part == ".." || strings.ContainsAny(part, `/\`) {
			return "", fmt.Errorf("output dir: bad path element %q", part)
		}
	}
	user, err := userDir(temp, true)
	if err != nil {
		return "", fmt.Errorf("output dir: %w", err)
	}
	// Each folder below is made or checked one at a time, never followed
	// if it is a symbolic link.
	dir := user
	for _, part := range []string{project, session, "tasks"} {
		dir = filepath.Join(dir, part)
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("output dir: %w", err)
		}
		fi, err := os.Lstat(dir)
		switch {
		case err != nil:
			return "", fmt.Errorf("output dir: %w", err)
		case fi.Mode()&fs.ModeSymlink != 0:
			return "", fmt.Errorf("output dir: %s: %w", dir, ErrSymlink)
		case !fi.IsDir():
			return "", fmt.Errorf("output dir: %s is not a directory", dir)
		}
	}
	return dir, nil
}

// userDir returns the per-user folder of temp, troupe-<uid>, making it
// (mode 0700) when create says so. It must be a directory of the current
// user, not a symlink another user planted in a shared /tmp.
func userDir(temp string, create bool) (string, error) {
	uid := os.Getuid()
	user := filepath.Join(temp, "troupe-"+strconv.Itoa(uid))
	if create {
		if err := os.Mkdir(user, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	fi, err := os.Lstat(user)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory (symlink?)", user)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != uid {
		return "", fmt.Errorf("%s belongs to uid %d, not %d", user, st.Uid, uid)
	}
	return user, nil
}

// SweepOutputs removes, under the per-user folder of temp ("" means
// os.TempDir()), every session's output folder (<project>/<session>, see
// OutputDir) in which nothing was written since before cutoff, then the
// project folders left empty; keep, a session folder, is never removed. It
// returns the folders removed. Symbolic links are neither followed nor
// removed, and a per-user folder that is not the user's is left alone with
// an error.
func SweepOutputs(temp string, cutoff time.Time, keep string) ([]string, error) {
	if temp == "" {
		temp = os.TempDir()
	}
	user, err := userDir(temp, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sweep task outputs: %w", err)
	}
	projects, err := os.ReadDir(user)
	if err != nil {
		return nil, fmt.Errorf("sweep task outputs: %w", err)
	}
	var removed []string
	var errs []error
	for _, p := range projects {
		if !p.IsDir() { // a symlink's entry type is not a directory
			continue
		}
		pdir := filepath.Join(user, p.Name())
		sessions, err := os.ReadDir(pdir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, se := range sessions {
			sdir := filepath.Join(pdir, se.Name())
			if !se.IsDir() || sdir == filepath.Clean(keep) || changedSince(sdir, cutoff) {
				continue
			}
			if err := os.RemoveAll(sdir); err != nil {
				errs = append(errs, err)
				continue
			}
			removed = append(removed, sdir)
		}
		os.Remove(pdir) // only when empty: another session's may remain
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("sweep task outputs: %w", err)
	}
	return removed, nil
}

// changedSince reports whether anything in folder dir (itself included)
// was modified at or after cutoff; an error reading it counts as a change,
// so that nothing is removed on a guess.
func changedSince(dir string, cutoff time.Time) bool {
	changed := false
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if !fi.ModTime().Before(cutoff) {
			changed = true
			return filepath.SkipAll
		}
		return nil
	})
	return changed || err != nil
}

// Output is a task's output file, capped in size and keeping its end:
// once more than the cap is held, the file's first blocks are given back to
// the file system in place (a hole is punched: the file keeps its size and
// every offset stays where it was, the dropped part reads as zeros and
// OutputStart tells where the kept part begins), so that the last output, the
// one that says how a command ended, is always there and the disk holds at
// most about the cap. Where holes cannot be punched (not Linux, a file system
// without them) the file keeps its head instead: past the cap, output is
// dropped and one marker line says so. Either way writes keep succeeding, so
// the task keeps running. Write is safe for concurrent use.
type Output struct {
	f    *os.File
	path string
	max  int64

	mu        sync.Mutex // serializes writes; guards the fields below
	size      int64
	start     int64 // the first byte kept; before it, given back
	truncated bool  // the head is kept and the rest dropped

	noPunch func() bool // tests: when it says true, punching fails
}

// punchAlign is the granularity of what the cap gives back: whole blocks
// of any common file system, and few system calls (one per 1/8 of the cap).
const punchAlign = 64 << 10

// TruncatedMarker is written once, after the cap, when output is dropped
// (where the file keeps its head).
func TruncatedMarker(max int64) string {
	return fmt.Sprintf("\n[output truncated: more than %d bytes; the rest was dropped]\n", max)
}

// OpenOutput opens (creating with mode 0600) the output file at path for
// appending, without following a symlink: a symlink there fails with an
// error wrapping ErrSymlink and nothing is written through it. Anything but
// a regular file is refused too. max <= 0 means DefaultMaxOutput.
func OpenOutput(path string, max int64) (*Output, error) {
	if max <= 0 {
		max = DefaultMaxOutput
	}
	// O_NONBLOCK: a planted FIFO fails instead of blocking the open.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("open task output %s: %w; refusing to write through it", path, ErrSymlink)
		}
		return nil, fmt.Errorf("open task output: %w", err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", path)
	}
	var size, start int64
	if err == nil {
		start = dataStart(f, fi.Size()) // moves the file offset: before the seek to the end
		size, err = f.Seek(0, io.SeekEnd)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open task output: %w", err)
	}
	return &Output{f: f, path: path, max: max, size: size, start: start}, nil
}

// Path returns the file's path.
func (o *Output) Path() string { return o.path }

// Size returns the bytes written so far (the marker included), dropped
// ones too: the offset the next write goes to.
func (o *Output) Size() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.size
}

// Write writes p, or the part of it under the cap; it always reports
// len(p) unless the file itself fails.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.writeLocked(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (o *Output) writeLocked(p []byte) error {
	if o.truncated {
		return nil
	}
	n, err := o.f.Write(p)
	o.size += int64(n)
	if err != nil || o.size-o.start <= o.max {
		return err
	}
	// Keep the last 7/8 of the cap, from a block boundary.
	to := (o.size - (o.max - o.max/8)) / punchAlign * punchAlign
	if to <= o.start {
		return nil // less than a block over: a later write punches
	}
	if o.noPunch == nil || !o.noPunch() {
		if err := punchHead(o.f, o.start, to); err == nil {
			o.start = to
			return nil
		}
	}
	// The head cannot be given back: keep it, and drop what comes next.
	o.truncated = true
	n, err = o.f.WriteString(TruncatedMarker(o.max))
	o.size += int64(n)
	return err
}

// captureBuf is the read size of Capture: large reads keep the pipe drained.
const captureBuf = 256 << 10

// Capture copies r into the file until EOF or a read error, which it
// returns (nil at EOF). A write error ends the copy but keeps draining r,
// so the writer is never blocked on a full pipe.
func (o *Output) Capture(r io.Reader) error {
	buf := make([]byte, captureBuf)
	var werr error
	for {
		n, err := r.Read(buf)
		if n > 0 && werr == nil {
			o.mu.Lock()
			werr = o.writeLocked(buf[:n])
			o.mu.Unlock()
		}
		if err == io.EOF {
			return werr
		}
		if err != nil {
			return err
		}
	}
}

// Close closes the file.
func (o *Output) Close() error { return o.f.Close() }

// ReadOutput returns up to max bytes of the file at path from offset, not
// following a symlink. A file no longer than offset gives nil. It reads
// the bytes as they are, zeros where the cap gave them back: ReadOutputAt
// skips those.
func ReadOutput(path string, offset, max int64) ([]byte, error) {
	rd, err := readOutput(path, func(f *os.File, size int64) (Read, error) {
		return readAt(f, size, 0, offset, max)
	})
	return rd.Data, err
}

// Read is a part of a task's output and where it lies in the whole.
type Read struct {
	Data   []byte
	Offset int64 // where Data begins in the output
	// Start is the output's first byte still kept: the ones before it
	// were dropped by the cap (see Output); 0 when none was.
	Start int64
	Size  int64 // the output's size when read: the end of what exists
}

// End returns the offset just past Data.
func (r Read) End() int64 { return r.Offset + int64(len(r.Data)) }

// ReadOutputAt returns up to max bytes of the output file at path from
// offset; an offset the cap dropped reads from Start on. Past the end it
// returns no data.
func ReadOutputAt(path string, offset, limit int64) (Read, error) {
	return readOutput(path, func(f *os.File, size int64) (Read, error) {
		start := dataStart(f, size)
		rd, err := readAt(f, size, start, max(offset, start), limit)
		return settle(f, rd), err
	})
}

// settle drops from rd what the cap gave back while it was read (the
// writer punches as it goes): zeros, not output.
func settle(f *os.File, rd Read) Read {
	start := dataStart(f, rd.Size)
	if start <= rd.Offset {
		return rd
	}
	skip := min(start-rd.Offset, int64(len(rd.Data)))
	rd.Data, rd.Offset, rd.Start = rd.Data[skip:], rd.Offset+skip, start
	return rd
}

// ReadOutputTail returns the last lines lines of the output file at path
// (a last line without its newline counts), but no more than its last limit
// bytes: a longer tail is cut at its front, at a line start when one is
// within limit. It reads only the end of the file, however large.
func ReadOutputTail(path string, lines int, limit int64) (Read, error) {
	return readOutput(path, func(f *os.File, size int64) (Read, error) {
		start := dataStart(f, size)
		from := max(start, size-limit)
		rd, err := readAt(f, size, start, from, size-from)
		rd = settle(f, rd)
		if err != nil || lines <= 0 {
			rd.Offset, rd.Data = size, nil
			return rd, err
		}
		d := rd.Data
		body := bytes.TrimSuffix(d, []byte("\n"))
		cut, i := -1, len(body)
		for n := 0; n < lines; n++ {
			j := bytes.LastIndexByte(body[:i], '\n')
			if j < 0 {
				cut = -1
				break
			}
			cut, i = j, j
		}
		switch {
		case cut >= 0: // the lines start after that newline
			rd.Offset += int64(cut + 1)
			rd.Data = d[cut+1:]
		case rd.Offset > rd.Start || from > start:
			// Fewer lines than asked in max bytes, and more before: begin
			// at the first line start within them, if any.
			if j := bytes.IndexByte(body, '\n'); j >= 0 && j+1 < len(d) {
				rd.Offset += int64(j + 1)
				rd.Data = d[j+1:]
			}
		}
		return rd, nil
	})
}

// readOutput opens the output file at path, not following a symlink and
// refusing anything but a regular file, and runs read on it.
func readOutput(path string, read func(f *os.File, size int64) (Read, error)) (Read, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return Read{}, fmt.Errorf("read task output %s: %w", path, ErrSymlink)
		}
		return Read{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Read{}, fmt.Errorf("read task output: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return Read{}, fmt.Errorf("read task output %s: not a regular file", path)
	}
	return read(f, fi.Size())
}

// readAt reads up to max bytes of f (of size size, kept from start) at
// offset.
func readAt(f *os.File, size, start, offset, max int64) (Read, error) {
	rd := Read{Offset: offset, Start: start, Size: size}
	if offset >= size || max <= 0 {
		rd.Offset = min(offset, size)
		return rd, nil
	}
	buf := make([]byte, min(size-offset, max))
	m, err := f.ReadAt(buf, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return Read{}, fmt.Errorf("read task output: %w", err)
	}
	rd.Data = buf[:m]
	return rd, nil
}
