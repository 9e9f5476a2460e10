// Package atomicfile replaces whole files atomically, the way Claude Code
// writes its agent-team inboxes: the new content goes to a temp file named
// <base>.tmp.<8 lowercase hex> in the same directory, is fsynced, and is then
// renamed over the target, after which the directory is fsynced.
//
// A reader (in any process) therefore sees either the old or the new
// content, never a torn file, and a writer killed at any moment leaves the
// target intact (at worst a temp file stays behind; SweepTemps removes it).
//
// Identity and Stat let a caller check that a file was not replaced or
// modified between its read and its commit (a compare-and-swap on the file's
// identity): read the Identity, read the file, and compare a fresh Identity in
// Options.BeforeCommit.
//
// All functions are safe for concurrent use; they keep no state. Atomicity
// between writers is not provided here: writers that must not lose each
// other's updates hold a lock (see package lockfile) across read and commit.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
)

// Options tunes WriteFile.
type Options struct {
	// BeforeCommit, if non-nil, runs after the temp file has been written,
	// fsynced and closed, just before it is renamed over the target. If it
	// returns an error the temp file is removed, the target is left
	// untouched and WriteFile returns that error wrapped. Typical uses:
	// lockfile.(*Lock).Verify and an Identity compare-and-swap.
	BeforeCommit func() error
	// AfterCommit, if non-nil, runs right after the rename, before the
	// folder is synced: the new content is in place for every reader but
	// may not yet survive a crash. WriteFile still returns only once the
	// folder is synced. Its use is to release a lock that only has to
	// cover the replace, so that the folder's sync is not done under it:
	// on a busy folder a sync waits for the file system's journal, and
	// every writer queued on the lock would wait for that too.
	AfterCommit func()
	// ExactMode gives the new file exactly perm, whatever the umask (to
	// keep an existing file's mode when replacing it).
	ExactMode bool
}

// tempInfix separates the target's base name from the random suffix.
const tempInfix = ".tmp."

// ErrUnsynced is matched by WriteFile's error when the new content is in
// place (renamed over path) and only the folder's sync failed: the write
// happened, though it may not survive a crash. Every other error means
// path was not touched.
var ErrUnsynced = errors.New("atomicfile: written but the folder not synced")

// WriteFile atomically replaces path with data. The new file is created with
// perm (before umask), like os.WriteFile. On any failure the temp file is
// removed and the target is untouched, except that an error syncing the
// directory after the rename is returned although the new content is
// already in place (it may then not survive a power loss): that error
// matches ErrUnsynced.
func WriteFile(path string, data []byte, perm os.FileMode, opts Options) error {
	if f := WriteFault.Load(); f != nil {
		if err := (*f)(path); err != nil {
			return fmt.Errorf("atomicfile: write %s: %w", path, err)
		}
	}
	f, tmp, err := createTemp(path, perm)
	if err != nil {
		return fmt.Errorf("atomicfile: write %s: %w", path, err)
	}
	committed := false
	defer func() {
		if !committed {
			f.Close()      // no-op error if already closed
			os.Remove(tmp) // best effort: the target is untouched either way
		}
	}()
	if opts.ExactMode {
		if err := f.Chmod(perm); err != nil {
			return fmt.Errorf("atomicfile: write %s: %w", path, err)
		}
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("atomicfile: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("atomicfile: write %s: sync: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("atomicfile: write %s: close: %w", path, err)
	}
	if opts.BeforeCommit != nil {
		if err := opts.BeforeCommit(); err != nil {
			return fmt.Errorf("atomicfile: write %s: before commit: %w", path, err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("atomicfile: write %s: %w", path, err)
	}
	committed = true
	if opts.AfterCommit != nil {
		opts.AfterCommit()
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("atomicfile: write %s: %w: %w", path, ErrUnsynced, err)
	}
	return nil
}

// tempName returns a fresh temp-file name for path:
// <path>.tmp.<8 lowercase hex random digits>.
func tempName(path string) (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return path + tempInfix + hex.EncodeToString(b[:]), nil
}

// createTemp creates a new temp file next to path with O_EXCL, retrying on
// the (unlikely) name collision.
func createTemp(path string, perm os.FileMode) (*os.File, string, error) {
	for range 10 {
		name, err := tempName(path)
		if err != nil {
			return nil, "", err
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		return f, name, nil
	}
	return nil, "", errors.New("could not create a unique temp file")
}

// WriteFault, when it holds a function (tests), is asked before each
// write; an error it returns fails the write before anything is created,
// as a full disk (syscall.ENOSPC) would: a way to check what callers do
// when they cannot write.
var WriteFault atomic.Pointer[func(path string) error]

// DirSyncFault, when it holds a function (tests), is asked before each
// folder sync after a rename; an error it returns is that sync's: a way
// to check that callers take ErrUnsynced for a write that happened.
var DirSyncFault atomic.Pointer[func(dir string) error]

// syncDir fsyncs a directory so a rename in it is durable. File systems
// that cannot sync directories (EINVAL, ENOTSUP) are not an error.
func syncDir(dir string) error {
	if f := DirSyncFault.Load(); f != nil {
		if err := (*f)(dir); err != nil {
			return err
		}
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		return nil
	}
	return err
}
