package file

import (
	"bytes"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/internal/atomicfile"
	"github.com/troupe-dev/troupe/team"
)

// The decoded team file is cached per path, so that the mailbox's roster
// check (every Send, Read, MarkRead and Watch) and a team update do not
// decode the whole member list each time: in a team of a thousand that
// decode was most of a spawn's cost, which made spawning a team quadratic.
//
// An entry is the file's bytes and their decoding, and the identity
// (device, inode, size, mtime, ctime) the file had around the read that
// produced them. A lookup stats the file once:
//
//   - the same identity, and the file last changed well before the read
//     that filled the entry (racySlack): the entry is current;
//   - otherwise the file is read, and when its bytes equal the entry's the
//     decoding is reused; only a real change is decoded.
//
// The second rule guards against a rewrite that leaves the identity as it
// was: file times come from a coarse kernel clock, so two rewrites within
// one tick can have the same times, and an atomic rename may reuse a freed
// inode number and give the same size. A rewrite made after the entry's
// read started has a change time no earlier than that start (less one
// clock tick), so once an entry's file had not changed for racySlack
// before the read, an equal identity means equal bytes. This is git's
// "racily clean" rule. It compares the kernel's file times with the wall
// clock, so it uses time.Now and not the store's injected clock.
//
// A write by this store records its bytes and decoding without an identity
// (the file could be replaced between the rename and a stat), so the next
// lookup reads the file once and finds its bytes equal. Changes by other
// processes change the identity or the bytes, so they are seen at once.
const racySlack = 50 * time.Millisecond

// teamSnap is one decoded team file. It is never modified after it is
// stored: callers that hand the config out or change it clone it first.
type teamSnap struct {
	id   atomicfile.Identity // zero when unknown (never matches a stat)
	seen time.Time           // wall time just before the read began
	raw  []byte
	cfg  team.Config
	// names is cfg's roster, in order, for the mailbox's recipient checks.
	names []string
	// members is each member's encoding in raw, where it is known to be
	// the canonical one (this store wrote raw, or the member's bytes equal
	// those of a snapshot before; nil for the others): the next update
	// reuses the unchanged ones, and the next decode the unchanged
	// members.
	members [][]byte
}

// trusted reports whether an equal identity proves the file still holds
// snap's bytes.
func (snap *teamSnap) trusted() bool {
	if !snap.id.Exists {
		return false
	}
	changed := max(snap.id.MtimeNs, snap.id.CtimeNs)
	return changed < snap.seen.Add(-racySlack).UnixNano()
}

// teamCache holds the latest snapshots of each team file this store read
// or wrote, newest first. Keeping two, not one, lets a reader that reads
// the file while a writer of this store replaces it match either version's
// bytes instead of decoding; a third (it kept three) cost a host of a
// 1,000-member team another copy of the roster (the 300 KB file and 222 KB
// of decoded members).
type teamCache struct {
	mu    sync.Mutex
	snaps map[string][]*teamSnap // guarded by mu; by team file path, newest first
}

// keepSnaps is how many snapshots of one team file are kept.
const keepSnaps = 2

// get returns path's newest snapshot and, through match, a lookup of any
// kept snapshot holding given bytes.
func (tc *teamCache) get(path string) *teamSnap {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if l := tc.snaps[path]; len(l) > 0 {
		return l[0]
	}
	return nil
}

// match returns the kept snapshot of path whose bytes are b, or nil.
func (tc *teamCache) match(path string, b []byte) *teamSnap {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	for _, snap := range tc.snaps[path] {
		if bytes.Equal(snap.raw, b) {
			return snap
		}
	}
	return nil
}

// readBufs recycles the buffers matchFile reads team files into, so that
// checking an unchanged file makes no garbage.
var readBufs = sync.Pool{New: func() any { return new([]byte) }}

// matchFile returns the kept snapshot of path whose bytes the file holds
// now, or nil (no such snapshot, or the file cannot be read: the caller
// reads it the usual way).
func (tc *teamCache) matchFile(path string) *teamSnap {
	tc.mu.Lock()
	snaps := tc.snaps[path]
	tc.mu.Unlock()
	if len(snaps) == 0 {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil
	}
	size := int(info.Size())
	if !slices.ContainsFunc(snaps, func(s *teamSnap) bool { return len(s.raw) == size }) {
		return nil
	}
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	if cap(*bp) < size+1 {
		// With room to grow: a team that gains a member per spawn grows
		// its file a little each time, and a buffer of the exact size was
		// too small for the next read (it was a quarter of the bytes a
		// thousand spawns allocated).
		*bp = make([]byte, size+1+size/4)
	}
	buf := (*bp)[:size+1]
	// One byte more than the size: a file that grew since the stat fails.
	if n, err := io.ReadFull(f, buf); err != io.ErrUnexpectedEOF || n != size {
		return nil
	}
	for _, s := range snaps {
		if bytes.Equal(s.raw, buf[:size]) {
			return s
		}
	}
	return nil
}

// put stores snap as path's newest snapshot.
func (tc *teamCache) put(path string, snap *teamSnap) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.putLocked(path, snap)
}

// replace stores snap unless the newest entry changed since the caller
// looked it up as old: a reader that read an older version of the file
// must not shadow what a writer stored meanwhile.
func (tc *teamCache) replace(path string, old, snap *teamSnap) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if l := tc.snaps[path]; len(l) == 0 && old == nil || len(l) > 0 && l[0] == old {
		tc.putLocked(path, snap)
	}
}

func (tc *teamCache) putLocked(path string, snap *teamSnap) {
	if tc.snaps == nil {
		tc.snaps = map[string][]*teamSnap{}
	}
	l := tc.snaps[path]
	out := make([]*teamSnap, 0, keepSnaps)
	out = append(out, snap)
	for _, s := range l {
		if len(out) == keepSnaps {
			break
		}
		if !bytes.Equal(s.raw, snap.raw) {
			out = append(out, s)
		}
	}
	tc.snaps[path] = out
}

func (tc *teamCache) forget(path string) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	delete(tc.snaps, path)
}

// newSnap returns a snapshot of cfg decoded from raw.
func newSnap(raw []byte, cfg team.Config, id atomicfile.Identity, seen time.Time) *teamSnap {
	return &teamSnap{id: id, seen: seen, raw: raw, cfg: cfg, names: cfg.Names()}
}
