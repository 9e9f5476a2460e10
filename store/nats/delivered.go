package nats

import (
	"sync"
	"time"
)

// A read of an inbox must include the message whose delivery kicked it.
//
// The consumer behind a store's inbox watches (watch.go) may run on any
// server that holds the mail stream, and on a cluster a follower can apply
// a message before the stream's leader does: its consumer delivers the
// message, the woken teammate reads its inbox, asks the leader for the
// inbox's newest message (mail.go), and the leader, still applying, knows
// none. The read found nothing, the teammate went back to sleep, and no
// other kick came: one message of 300 sent to a 1,000-teammate team on a
// three-node cluster woke nobody, in about half the runs. So the watch
// notes the sequence of every message it delivers, and a read of that
// inbox counts it with the leader's newest: a read that cannot find it,
// from a replica or the leader, starts over (errStalled, after a retry's
// backoff). A message deleted before any read (a team deleted, an entry
// moved aside) would hold every read of its inbox; so a delivered
// sequence is required only for deliveredFor after its delivery.

// deliveredFor is how long after a watch delivered a message a read of its
// inbox must include it.
var deliveredFor = 2 * time.Second

// deliveredSeqs is the newest delivered message of each inbox. The zero
// value is ready to use.
type deliveredSeqs struct {
	mu    sync.Mutex
	seqs  map[string]deliveredSeq // guarded by mu; by inbox subject
	swept time.Time               // guarded by mu
}

type deliveredSeq struct {
	seq uint64
	at  time.Time
}

// note records that a watch delivered message seq of inbox at now.
func (d *deliveredSeqs) note(inbox string, seq uint64, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seqs == nil {
		d.seqs = map[string]deliveredSeq{}
	}
	if now.Sub(d.swept) > deliveredFor {
		// Old entries go, so that the map holds the inboxes of the last
		// moments, not every inbox ever kicked.
		for k, v := range d.seqs {
			if now.Sub(v.at) > deliveredFor {
				delete(d.seqs, k)
			}
		}
		d.swept = now
	}
	if cur := d.seqs[inbox]; seq > cur.seq {
		d.seqs[inbox] = deliveredSeq{seq: seq, at: now}
	}
}

// floor returns the newest message of inbox that a read at now must
// include, 0 for none.
func (d *deliveredSeqs) floor(inbox string, now time.Time) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := d.seqs[inbox]
	if !ok || now.Sub(v.at) > deliveredFor {
		return 0
	}
	return v.seq
}
