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

// maxReadFloors bounds the floors one store keeps: past it they are all
// forgotten, and the next reads fetch whole inboxes once again.
const maxReadFloors = 100_000

// readFloors is the read floor of each inbox this store has read. The
// zero value is ready to use.
type readFloors struct {
	mu     sync.Mutex
	floors map[string]uint64 // guarded by mu; by inbox subject
	gen    uint64            // guarded by mu; counts resets
}

// get returns the read floor of inbox (0: none known) and the generation
// to hand to raise.
func (f *readFloors) get(inbox string) (floor, gen uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.floors[inbox], f.gen
}

// raise records floor for inbox, found by a read that began at generation
// gen, unless the floors were forgotten since or already say more.
func (f *readFloors) raise(inbox string, floor, gen uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if gen != f.gen || floor <= f.floors[inbox] {
		return
	}
	if f.floors == nil || len(f.floors) >= maxReadFloors {
		f.floors = map[string]uint64{}
	}
	f.floors[inbox] = floor
}

// reset forgets every floor: the connection was lost, and the server may
// come back with a stream whose sequences start again.
func (f *readFloors) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.floors = nil
	f.gen++
}
