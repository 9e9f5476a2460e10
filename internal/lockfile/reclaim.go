package lockfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
)

// reclaim removes the lock directory dir if it is still the stale lock
// judged (same device, inode and mtime). Unlike proper-lockfile's
// rmdir+mkdir, it is atomic between concurrent reclaimers
// (proper-lockfile#121):
//
//  1. Open dir and check, through the open handle, that it is still the
//     version judged stale.
//  2. Claim that version: mkdir .reclaim-<mtime> inside it, through the
//     handle. Of several reclaimers that judged the same version, exactly
//     one succeeds; the others stop. (The claim also bumps the lock's
//     mtime, so to everyone else the claimed lock looks fresh, and a
//     non-empty directory cannot be rmdir'd by a proper-lockfile peer.)
//     Then check that the claimed directory is still at dir.
//  3. Rename dir to a unique sibling <dir>.stale-<random>, and check that
//     the moved directory is the claimed one; if so, remove it. The caller
//     then competes for the lock with a plain mkdir.
//  4. Otherwise we moved a live lock (possible only if we were paused for
//     a stale period between steps 2 and 3): put it back with a rename
//     that refuses to replace. If the name was taken again meanwhile,
//     remove the moved copy: its holder's Verify then fails, so it never
//     commits.
//
// If a reclaimer dies between steps 2 and 4, the claimed lock turns stale
// again one stale period later and is reclaimed under a new claim name.
// reclaim returns an error only for unexpected failures; whether or not it
// removed anything, the caller retries mkdir.
func reclaim(dir string, judged ident, log *slog.Logger) error {
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // released or reclaimed meanwhile
	}
	if err != nil {
		return err
	}
	defer root.Close()
	fi, err := root.Stat(".")
	if err != nil {
		return err
	}
	if identOf(fi) != judged {
		return nil // refreshed, claimed or replaced since we judged it
	}
	if err := root.Mkdir(".reclaim-"+strconv.FormatInt(judged.mtime, 10), 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist) {
			return nil // another reclaimer claimed this version, or removed it
		}
		return err
	}
	// The claim counts only if the claimed directory is still at dir. If
	// another reclaimer already moved it away, our claim may have succeeded
	// only because that reclaimer's removal had just deleted its own claim;
	// once moved, the directory never comes back, so this check is final.
	if cur, err := statIdent(dir); err != nil || !cur.sameDir(judged) {
		return nil
	}
	return moveAndRemove(dir, judged, log, renameNoReplace)
}

// moveAndRemove does steps 3 and 4 of reclaim, with the put-back rename
// injected for tests.
func moveAndRemove(dir string, judged ident, log *slog.Logger, putBack func(from, to string) error) error {
	moved := dir + ".stale-" + randomHex()
	if err := os.Rename(dir, moved); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	got, err := statIdent(moved)
	if err != nil {
		return err
	}
	if got.sameDir(judged) {
		if err := removeAll(moved); err != nil {
			log.Warn("lockfile: cannot remove reclaimed stale lock", "dir", moved, "err", err)
		}
		log.Debug("lockfile: reclaimed stale lock", "dir", dir, "lock", judged)
		return nil
	}
	err = putBack(moved, dir)
	if err == nil {
		log.Warn("lockfile: moved a live lock while reclaiming and put it back", "dir", dir, "lock", got)
		return nil
	}
	if rerr := removeAll(moved); rerr != nil {
		log.Warn("lockfile: cannot remove moved lock", "dir", moved, "err", rerr)
	}
	log.Warn("lockfile: moved a live lock while reclaiming and could not put it back; its holder will find it compromised",
		"dir", dir, "lock", got, "err", err)
	return nil
}

// removeAll removes a moved-away lock directory. A late reclaimer may add
// its claim inside while we remove it (see reclaim), making the final rmdir
// fail; trying again removes that claim too.
func removeAll(path string) error {
	var err error
	for range 5 {
		if err = os.RemoveAll(path); err == nil {
			return nil
		}
	}
	return err
}

// randomHex returns 16 random lowercase hex digits.
func randomHex() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}
