package file

import (
	"io"
	"os"
	"sync"
	"sync/atomic"
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

// settledBefore reports whether a file whose identity a stat gave as id
// had stopped changing racySlack before seen (when the read that took its
// bytes began): then, by the rule above, an equal identity later means
// equal bytes. The task list cache (taskcache.go) uses the same rule.
//
// A file system that keeps whole seconds (ext3, HFS+, ext4 with small
// inodes; FAT keeps two) gives a rewrite within the same second the same
// times: there a file is trusted only once coarseSlack has passed. Such
// times are told by their sub-second part, zero in both (on a
// nanosecond file system that is one time in a billion, and costs only
// a read).
func settledBefore(id atomicfile.Identity, seen time.Time) bool {
	changed := max(id.MtimeNs, id.CtimeNs)
	slack := racySlack
	if id.MtimeNs%int64(time.Second) == 0 && id.CtimeNs%int64(time.Second) == 0 {
		slack = coarseSlack
	}
	return id.Exists && changed < seen.Add(-slack).UnixNano()
}

// coarseSlack is racySlack for file times kept in whole seconds (or two).
const coarseSlack = 3 * time.Second

// teamSnap is one decoded team file. It is never modified after it is
// stored: callers that hand the config out or change it copy it first, and
// a snapshot made from another shares what did not change (the members,
// their encodings, the names) with it.
type teamSnap struct {
	id   atomicfile.Identity // zero when unknown (never matches a stat)
	seen time.Time           // wall time just before the read began
	// cfg is the team's top-level fields; its Members is nil: the members
	// are in members (config builds the whole Config).
	cfg team.Config
	// names is the roster, in order, for the mailbox's recipient checks.
	names []string
	// members is the roster, in order.
	members []*memberEntry
	// namesUsed and membersUsed count the slots taken in the arrays under
	// names and members, shared by every snapshot that uses them: a
	// snapshot whose slice ends at the last taken slot may append in place
	// (grow), so that a member added to a roster of a thousand does not
	// copy it.
	namesUsed, membersUsed *atomic.Int32
	// The file's bytes: raw when the snapshot was read from the file;
	// otherwise (raw nil) the bytes this store wrote: head, the members'
	// encodings laid out as json.MarshalIndent lays them, then tail
	// (piece). Every member's enc is canonical then.
	raw        []byte
	head, tail []byte
	size       int
}

// memberEntry is one member of a snapshot, shared by the snapshots in
// which it did not change. It is never modified.
type memberEntry struct {
	m team.Member
	// enc is the bytes m was decoded from or encoded to, nil when not
	// known (a file decoded whole); canon says they are m's canonical
	// encoding (encodeMember), which a write may reuse. A decode reuses m
	// when the member's bytes in the new file are enc.
	enc   []byte
	canon bool
}

// trusted reports whether an equal identity proves the file still holds
// snap's bytes.
func (snap *teamSnap) trusted() bool { return settledBefore(snap.id, snap.seen) }

// teamCache holds the latest snapshots of each team file this store read
// or wrote, newest first. Keeping two, not one, lets a reader that reads
// the file while a writer of this store replaces it match either version's
// bytes instead of decoding; a third (it kept three) cost a host of a
// 1,000-member team another copy of the roster.
type teamCache struct {
	mu    sync.Mutex
	snaps map[string][]*teamSnap // guarded by mu; by team file path, newest first
	// bufs holds each team file's write buffer between writes (taken out
	// while a write uses it): a rewrite of a 300 KB file allocated 300 KB.
	bufs map[string]*[]byte // guarded by mu; by team file path
}

// keepSnaps is how many snapshots of one team file are kept.
const keepSnaps = 2

// get returns path's newest snapshot.
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
	snaps := tc.snaps[path]
	tc.mu.Unlock()
	for _, snap := range snaps {
		if snap.equal(b) {
			return snap
		}
	}
	return nil
}

// readChunk is how much of a team file matchFile reads at a time.
const readChunk = 32 << 10

// readBufs recycles the buffers matchFile reads team files into, so that
// checking an unchanged file makes no garbage.
var readBufs = sync.Pool{New: func() any { b := make([]byte, readChunk); return &b }}

// matchFile returns the kept snapshot of path whose bytes the file holds
// now, or nil (no such snapshot, or the file cannot be read: the caller
// reads it the usual way). It reads the file in chunks, comparing each
// with every kept snapshot of the file's size, and allocates nothing for
// it: after each write of this store the file is read back once so.
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
	var (
		curs [keepSnaps]cursor
		live [keepSnaps]bool
		any  bool
	)
	for i, s := range snaps[:min(len(snaps), keepSnaps)] {
		if int64(s.size) == info.Size() {
			curs[i], live[i], any = cursor{s: s}, true, true
		}
	}
	if !any {
		return nil
	}
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	buf := *bp
	total := 0
	for {
		n, err := f.Read(buf)
		total += n
		if total > int(info.Size()) {
			return nil // the file grew since the stat
		}
		any = false
		for i := range curs {
			if live[i] {
				live[i] = curs[i].equal(buf[:n])
				any = any || live[i]
			}
		}
		if !any {
			return nil
		}
		if err == io.EOF || n == 0 && err == nil {
			break
		}
		if err != nil {
			return nil
		}
	}
	if total != int(info.Size()) {
		return nil
	}
	for i := range curs {
		if live[i] && curs[i].done() {
			return snaps[i]
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
		if !sameBytes(s, snap) {
			out = append(out, s)
		}
	}
	tc.snaps[path] = out
}

func (tc *teamCache) forget(path string) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	delete(tc.snaps, path)
	delete(tc.bufs, path)
}

// takeBuf returns path's write buffer (empty, with the capacity of the
// last write), which the caller hands back with putBuf.
func (tc *teamCache) takeBuf(path string) *[]byte {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if b := tc.bufs[path]; b != nil {
		delete(tc.bufs, path)
		*b = (*b)[:0]
		return b
	}
	return new([]byte)
}

// putBuf keeps b as path's write buffer.
func (tc *teamCache) putBuf(path string, b *[]byte) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.bufs == nil {
		tc.bufs = map[string]*[]byte{}
	}
	tc.bufs[path] = b
}
