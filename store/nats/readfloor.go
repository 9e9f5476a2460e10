package nats

import "sync"

// A read of the unread messages of an inbox asks only for those after the
// inbox's read floor: a stream sequence at or below which every message of
// the inbox is marked read. An inbox keeps up to KeepRead read messages,
// and fetching them all on each read of a few new ones was most of a read's
// cost, on the client and on the server (a lead woken by each idle
// notification of a thousand teammates fetched a hundred read messages
// each time).
//
// The floor is what this store's last read of the inbox found: the newest
// message in the unbroken run of read messages the read began with. It
// stays true, because a message's sequence is given when it is stored and
// only grows, and a read mark is never taken back (MarkRead adds marks and
// prunes only the oldest read messages). What could make it false is a
// stream whose sequences start again (a server whose data was wiped): a
// server can do that only across a restart, so every disconnection
// forgets the floors, and a read that began before it does not set one
// after it.

// A read of the unread messages also keeps the stream sequence of each
// message it returned, by id, so that marking them read, which the reader
// does next, need not ask the server where each one is (a direct get per
// id). The MarkRead that uses a sequence forgets it; the rest are
// forgotten with the floors or at the inbox's next read. A sequence kept
// can name a message deleted since (another store pruned it): its mark
// is harmless, and the prune that reaches it passes over it.

// maxReadFloors bounds the inboxes one store keeps a floor of: past it
// they are all forgotten, and the next reads fetch whole inboxes once
// again.
const maxReadFloors = 100_000

// idSeq is a message's id and stream sequence.
type idSeq struct {
	id  string
	seq uint64
}

// inboxRead is what the last read of one inbox found.
type inboxRead struct {
	floor    uint64
	returned []idSeq // the messages it returned
}

// readFloors is what this store's reads found of each inbox. The zero
// value is ready to use.
type readFloors struct {
	mu      sync.Mutex
	inboxes map[string]inboxRead // guarded by mu; by inbox subject
	gen     uint64               // guarded by mu; counts resets
}

// get returns the read floor of inbox (0: none known) and the generation
// to hand to record.
func (f *readFloors) get(inbox string) (floor, gen uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inboxes[inbox].floor, f.gen
}

// record keeps what a read of inbox that began at generation gen found:
// the floor (unless the inboxes already say more) and the messages it
// returned. Nothing is kept when the floors were forgotten since.
func (f *readFloors) record(inbox string, floor uint64, returned []idSeq, gen uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if gen != f.gen {
		return
	}
	if f.inboxes == nil || len(f.inboxes) >= maxReadFloors {
		f.inboxes = map[string]inboxRead{}
	}
	r := f.inboxes[inbox]
	r.floor = max(r.floor, floor)
	r.returned = returned
	f.inboxes[inbox] = r
}

// take returns the stream sequences of those of ids that the last read of
// inbox returned, and forgets them: a remembered sequence is for the
// MarkRead that follows the read, not for one long after, when the message
// may have been deleted (a mark of a sequence that is gone costs nothing,
// its prune passes over it, but the message, sent again, would stay
// unread).
func (f *readFloors) take(inbox string, ids []string) map[string]uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.inboxes[inbox]
	if !ok || len(r.returned) == 0 {
		return nil
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	out := make(map[string]uint64, len(ids))
	kept := r.returned[:0]
	for _, m := range r.returned {
		if want[m.id] {
			out[m.id] = m.seq
			continue
		}
		kept = append(kept, m)
	}
	r.returned = kept
	f.inboxes[inbox] = r
	return out
}

// generation returns the count of resets: a read that began at another
// one began before a disconnection.
func (f *readFloors) generation() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gen
}

// reset forgets everything: the connection was lost, and the server may
// come back with a stream whose sequences start again.
func (f *readFloors) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inboxes = nil
	f.gen++
}
