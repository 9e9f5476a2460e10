package file

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/internal/atomicfile"
	"github.com/troupe-dev/troupe/internal/lockfile"
	"github.com/troupe-dev/troupe/team"
)

var _ team.Store = (*Teams)(nil)

const (
	teamFileName = "config.json"
	// deletedInfix marks a team (or task list) folder being removed:
	// <dir>.deleted-<random>, as Claude Code names it. Canonical names
	// cannot contain '.', so such folders never clash with a team.
	deletedInfix = ".deleted-"
	// updateTries bounds how often Update re-reads a team file that was
	// changed under its lock by a writer that does not take the lock.
	updateTries = 3
	// removeTries is how often a deleted folder's removal is attempted.
	removeTries = 3
)

// errTeamFileChanged says the team file was replaced or rewritten between
// Update's read and its commit.
var errTeamFileChanged = errors.New("team file changed under the lock")

func (ts *Teams) configPath(name string) string {
	return filepath.Join(ts.s.teamDir(name), teamFileName)
}

// begin checks the store is open and name canonical.
func (ts *Teams) begin(op, name string) error {
	if ts.s.isClosed() {
		return team.ErrClosed
	}
	if err := checkTeamName(name); err != nil {
		return fmt.Errorf("%s team: %w", op, err)
	}
	if err := ts.s.checkNoLinks(filepath.Join(ts.s.teamDir(name), "inboxes")); err != nil {
		return fmt.Errorf("%s team %s: %w", op, name, err)
	}
	return nil
}

// readConfig reads and decodes a team file (see snapshot) and returns a
// copy the caller owns.
func (ts *Teams) readConfig(ctx context.Context, name, path string, locked bool) (team.Config, error) {
	snap, err := ts.snapshot(ctx, name, path, locked)
	if err != nil {
		return team.Config{}, err
	}
	return snap.config(), nil
}

// snapshot returns the decoded team file at path, from the store's cache
// when the file has not changed (teamcache.go), else read and decoded. A
// file that fails to decode is re-read, and when locked is false (the
// caller does not hold the team lock) also re-read under the team lock,
// which Claude Code holds while it rewrites the file in place. A missing
// file gives team.ErrNotFound; an undecodable one an error naming the file
// and the field, which does not match team.ErrNotFound. The snapshot is
// shared: callers must not modify it.
func (ts *Teams) snapshot(ctx context.Context, name, path string, locked bool) (*teamSnap, error) {
	cache := &ts.s.teamCache
	old := cache.get(path)
	seen := time.Now() // the kernel's clock, not s.now: see racySlack
	before, err := atomicfile.Stat(path)
	if err == nil && old != nil && old.id == before && old.trusted() {
		return old, nil
	}
	if same := cache.matchFile(path); same != nil {
		// Unchanged bytes, compared in chunks: no decode, no garbage.
		id := atomicfile.Identity{}
		if after, err := atomicfile.Stat(path); err == nil && after == before {
			id = before
		}
		snap := same.withID(id, seen)
		cache.replace(path, old, snap)
		return snap, nil
	}
	var locks []string
	if !locked {
		locks = []string{path}
	}
	var snap *teamSnap
	_, derr, err := readSettled(ctx, ts.s, path, func(b []byte) error {
		if same := cache.match(path, b); same != nil {
			snap = same
			return nil
		}
		var err error
		snap, err = decodeSnap(b, old)
		return err
	}, locks...)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		cache.forget(path)
		return nil, fmt.Errorf("team %s: %w", name, team.ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("read team %s: %w", name, err)
	case derr != nil:
		return nil, fmt.Errorf("read %s: %w", path, derr)
	}
	id := atomicfile.Identity{} // unknown unless the file stood still around the read
	if after, err := atomicfile.Stat(path); err == nil && after == before {
		id = before
	}
	snap = snap.withID(id, seen)
	cache.replace(path, old, snap)
	return snap, nil
}

// Create stores a new team: its folder, inboxes/ and config.json. The team
// file is published with a hard link from a fully written temp file, so it
// appears complete and exactly one of several racing creators (in any
// process) wins; the others get team.ErrExists. A folder without a team
// file, left by a crash, is reused.
func (ts *Teams) Create(ctx context.Context, c team.Config) error {
	if err := ts.begin("create", c.Name); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("create team %s: %w", c.Name, context.Cause(ctx))
	}
	data, err := encodeConfig(c)
	if err != nil {
		return fmt.Errorf("create team %s: %w", c.Name, err)
	}
	dir := ts.s.teamDir(c.Name)
	path := filepath.Join(dir, teamFileName)
	// A concurrent Delete may rename the folder away between our mkdir and
	// the link; start over then.
	for range 3 {
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create team %s: %w", c.Name, err)
		}
		err := os.Mkdir(filepath.Join(dir, "inboxes"), 0o700)
		if err == nil || errors.Is(err, fs.ErrExist) {
			err = createExclusive(path, data)
		}
		switch {
		case err == nil:
			return nil
		case errors.Is(err, fs.ErrExist):
			return fmt.Errorf("create team %s: %w", c.Name, team.ErrExists)
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("create team %s: %w", c.Name, err)
		}
	}
	return fmt.Errorf("create team %s: its folder keeps disappearing (concurrent delete?)", c.Name)
}

// createExclusive creates path holding data, failing with fs.ErrExist if it
// exists. The data is written and synced to a temp file first and then
// hard-linked into place, so no reader sees a partial file; where hard
// links are not supported it falls back to an exclusive create.
func createExclusive(path string, data []byte) error {
	// The temp name has atomicfile's shape, so SweepTemps clears leftovers.
	var rnd [4]byte
	rand.Read(rnd[:])
	tmp := path + ".tmp." + hex.EncodeToString(rnd[:])
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	err = os.Link(tmp, path)
	var le *os.LinkError
	if err != nil && errors.As(err, &le) && !errors.Is(err, fs.ErrExist) && !errors.Is(err, fs.ErrNotExist) {
		// No hard links here (some FUSE or FAT mounts): exclusive create.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	if err != nil {
		return err
	}
	syncFolder(filepath.Dir(path))
	return nil
}

// syncFolder fsyncs a folder so a new entry in it is durable; failures (file
// systems that cannot sync folders) are ignored.
func syncFolder(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// Get returns the team called name, or an error matching team.ErrNotFound.
// A team file that does not decode gives an error naming the file and the
// field.
func (ts *Teams) Get(ctx context.Context, name string) (team.Config, error) {
	if err := ts.begin("get", name); err != nil {
		return team.Config{}, err
	}
	return ts.readConfig(ctx, name, ts.configPath(name), false)
}

// List returns every team sorted by name. Folders being deleted and folders
// without a team file are skipped; team files that do not decode are
// reported in the returned error, alongside the good teams.
func (ts *Teams) List(ctx context.Context) ([]team.Config, error) {
	if ts.s.isClosed() {
		return nil, team.ErrClosed
	}
	root := filepath.Join(ts.s.root, "teams")
	des, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list teams: %w", err)
	}
	var (
		out  []team.Config
		errs []error
	)
	for _, de := range des {
		if de.Type()&fs.ModeSymlink != 0 && !strings.Contains(de.Name(), deletedInfix) {
			errs = append(errs, fmt.Errorf("team folder %s: %w", filepath.Join(root, de.Name()), ErrSymlink))
			continue
		}
		if !de.IsDir() || strings.Contains(de.Name(), deletedInfix) {
			continue
		}
		c, err := ts.readConfig(ctx, de.Name(), filepath.Join(root, de.Name(), teamFileName), false)
		switch {
		case err == nil:
			out = append(out, c)
		case errors.Is(err, team.ErrNotFound):
		default:
			errs = append(errs, err)
		}
	}
	slices.SortFunc(out, func(a, b team.Config) int { return strings.Compare(a.Name, b.Name) })
	if len(errs) > 0 {
		return out, fmt.Errorf("list teams: %w", errors.Join(errs...))
	}
	return out, nil
}

// Update applies fn to team name under the team lock (config.json.lock,
// shared with Claude Code) and writes the result atomically, after checking
// that the lock is still held and the file was not changed since it was
// read. An error from fn is returned as is; fn may run again if another
// writer changed the file without the lock. The team's name cannot change.
func (ts *Teams) Update(ctx context.Context, name string, fn func(*team.Config) error) (team.Config, error) {
	return ts.update(ctx, name, fn, true)
}

var _ team.Mutator = (*Teams)(nil)

// Mutate is Update for callers that do not keep the config (team.Mutator):
// the config fn changed is cached as written, without another copy.
func (ts *Teams) Mutate(ctx context.Context, name string, fn func(*team.Config) error) error {
	_, err := ts.update(ctx, name, fn, false)
	return err
}

// update is Update; given keep false, it returns no config and caches the
// one fn changed instead of a copy.
func (ts *Teams) update(ctx context.Context, name string, fn func(*team.Config) error, keep bool) (team.Config, error) {
	if err := ts.begin("update", name); err != nil {
		return team.Config{}, err
	}
	var out team.Config
	err := ts.write(ctx, name, func(snap *teamSnap) (*teamSnap, error) {
		c := snap.config()
		storedName := c.Name
		if err := fn(&c); err != nil {
			return nil, err // as is: write returns change's errors unwrapped
		}
		if c.Name != storedName {
			return nil, fmt.Errorf("update team %s: the name cannot change (to %q)", name, c.Name)
		}
		// An Update's fn may keep &c: the cache holds a copy of its own
		// then.
		next, err := encodeSnap(c, snap, keep)
		if err != nil {
			return nil, fmt.Errorf("update team %s: %w", name, err)
		}
		out = c
		return next, nil
	})
	if err != nil || !keep {
		return team.Config{}, err
	}
	return out, nil
}

// write changes team name under the team lock (config.json.lock, shared
// with Claude Code): change makes the next snapshot from the current one
// (nil: nothing to write; its error aborts the write and is returned as
// is), and the snapshot's bytes are written atomically, after checking
// that the lock is still held and the file was not changed since it was
// read. change may run again if another writer changed the file without
// the lock. The file is built in the team's write buffer, kept between
// writes.
func (ts *Teams) write(ctx context.Context, name string, change func(*teamSnap) (*teamSnap, error)) error {
	path := ts.configPath(name)
	lk, err := ts.lockTeam(ctx, name, path)
	if err != nil {
		return err
	}
	defer ts.release(lk)
	for range updateTries {
		before, err := atomicfile.Stat(path)
		if err != nil {
			return fmt.Errorf("update team %s: %w", name, err)
		}
		snap, err := ts.snapshot(ctx, name, path, true)
		if err != nil {
			return err
		}
		if after, err := atomicfile.Stat(path); err != nil || after != before {
			continue // rewritten while we read it
		}
		next, err := change(snap)
		if err != nil || next == nil {
			return err
		}
		// Cached before the rename, so that a reader of this store that
		// reads the new file finds its bytes known (the old ones are kept
		// too).
		next.seen = time.Now()
		ts.s.teamCache.put(path, next)
		buf := ts.s.teamCache.takeBuf(path)
		*buf = next.appendTo(*buf)
		err = atomicfile.WriteFile(path, *buf, 0o600, atomicfile.Options{BeforeCommit: func() error {
			if err := lk.Verify(); err != nil {
				return err
			}
			if now, err := atomicfile.Stat(path); err != nil || now != before {
				return errTeamFileChanged
			}
			return nil
		}})
		ts.s.teamCache.putBuf(path, buf)
		if errors.Is(err, errTeamFileChanged) {
			continue
		}
		if err := ts.s.written(err, "team file", "team", name); err != nil {
			return fmt.Errorf("update team %s: %w", name, err)
		}
		ts.s.sweepTemps(filepath.Dir(path))
		return nil
	}
	return fmt.Errorf("update team %s: %w %d times; another program writes it without the lock", name, errTeamFileChanged, updateTries)
}

// Delete removes team name after check accepts it (check runs under the
// team lock; its error is returned as is): the team folder is renamed to
// <dir>.deleted-<random>, so it vanishes at once, and then removed, and
// the team's task list goes the same way.
func (ts *Teams) Delete(ctx context.Context, name string, check func(team.Config) error) error {
	if err := ts.begin("delete", name); err != nil {
		return err
	}
	dir := ts.s.teamDir(name)
	path := filepath.Join(dir, teamFileName)
	lk, err := ts.lockTeam(ctx, name, path)
	if err != nil {
		return err
	}
	locked := true
	defer func() {
		if locked {
			ts.release(lk)
		}
	}()
	c, err := ts.readConfig(ctx, name, path, true)
	if err != nil {
		return err
	}
	if check != nil {
		if err := check(c); err != nil {
			return err
		}
	}
	if err := lk.Verify(); err != nil {
		return fmt.Errorf("delete team %s: %w", name, err)
	}
	grave := dir + deletedInfix + deletedSuffix()
	if err := os.Rename(dir, grave); err != nil {
		return fmt.Errorf("delete team %s: %w", name, err)
	}
	ts.s.teamCache.forget(path)
	// The lock directory moved with the folder and goes with it; nobody
	// can take it at the old path until a new team is created there.
	locked = false
	_ = lk.Release()
	if err := removeGrave(dir, grave); err != nil {
		ts.s.log.Warn("remove deleted team folder", "path", grave, "err", err)
	}
	list := ts.s.listDir(name)
	listGrave := list + deletedInfix + deletedSuffix()
	switch err := os.Rename(list, listGrave); {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("delete team %s: task list: %w", name, err)
	}
	if err := removeGrave(list, listGrave); err != nil {
		return fmt.Errorf("delete team %s: task list: %w", name, err)
	}
	return nil
}

// removeGrave removes a renamed-away folder, trying a few times (a writer
// that still had a file open inside may add an entry meanwhile).
func removeGrave(orig, grave string) error {
	var err error
	for range removeTries {
		if err = os.RemoveAll(grave); err == nil {
			return nil
		}
	}
	return fmt.Errorf("remove %s (was %s): %w", grave, filepath.Base(orig), err)
}

// deletedSuffix returns a random suffix for a folder being deleted.
func deletedSuffix() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// lockTeam takes the team lock, returning team.ErrNotFound when the team
// does not exist (before or after waiting for the lock).
func (ts *Teams) lockTeam(ctx context.Context, name, path string) (*lockfile.Lock, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("team %s: %w", name, team.ErrNotFound)
	}
	lk, err := ts.s.lock(ctx, path)
	if err != nil {
		if _, serr := os.Lstat(path); errors.Is(serr, fs.ErrNotExist) {
			return nil, fmt.Errorf("team %s: %w", name, team.ErrNotFound)
		}
		return nil, fmt.Errorf("lock team %s: %w", name, err)
	}
	return lk, nil
}

// release releases lk, logging a failure.
func (ts *Teams) release(lk *lockfile.Lock) {
	if err := lk.Release(); err != nil {
		ts.s.log.Warn("release team lock", "err", err)
	}
}
