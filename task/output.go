package task

import (
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
	uid := os.Getuid()
	user := filepath.Join(temp, "troupe-"+strconv.Itoa(uid))
	if err := os.Mkdir(user, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("output dir: %w", err)
	}
	fi, err := os.Lstat(user)
	if err != nil {
		return "", fmt.Errorf("output dir: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("output dir: %s is not a directory (symlink?)", user)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != uid {
		return "", fmt.Errorf("output dir: %s belongs to uid %d, not %d", user, st.Uid, uid)
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

// Output is a task's output file, capped in size: past the cap, output is
// dropped and one marker line says so; writes keep succeeding, so the task
// keeps running. Write is safe for concurrent use.
type Output struct {
	f    *os.File
	path string
	max  int64

	mu        sync.Mutex // serializes writes; guards the fields below
	size      int64
	truncated bool
}

// TruncatedMarker is written once, after the cap, when output is dropped.
func TruncatedMarker(max int64) string {
	return fmt.Sprintf("\n[output truncated: more than %d bytes; the rest was dropped]\n", max)
}

// OpenOutput opens (creating with mode 0600) the output file at path for
// appending, without following a symlink: a symlink there fails with an
// error wrapping ErrSymlink and nothing is written through it. Anything but
// a regular file is refused too.
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
	var size int64
	if err == nil {
		size, err = f.Seek(0, io.SeekEnd)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open task output: %w", err)
	}
	return &Output{f: f, path: path, max: max, size: size}, nil
}

// Path returns the file's path.
func (o *Output) Path() string { return o.path }

// Size returns the bytes written so far (the marker included).
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
	room := o.max - o.size
	if int64(len(p)) <= room {
		n, err := o.f.Write(p)
		o.size += int64(n)
		return err
	}
	if room > 0 {
		n, err := o.f.Write(p[:room])
		o.size += int64(n)
		if err != nil {
			return err
		}
	}
	o.truncated = true
	n, err := o.f.WriteString(TruncatedMarker(o.max))
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
// following a symlink. A file no longer than offset gives nil.
func ReadOutput(path string, offset, max int64) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read task output %s: not a regular file", path)
	}
	if fi.Size() <= offset {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("read task output: %w", err)
	}
	defer f.Close()
	n := min(fi.Size()-offset, max)
	buf := make([]byte, n)
	m, err := f.ReadAt(buf, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read task output: %w", err)
	}
	return buf[:m], nil
}
