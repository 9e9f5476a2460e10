package remote

import (
	"context"
	"fmt"
	"time"
)

// jobWatch is the watch of one job's events that a lead tracking the job,
// or a worker running it, keeps: made again when it ends, and when it
// stays open but delivers nothing of what the queue holds (stalled).
type jobWatch struct {
	queue  Queue
	id     string
	every  time.Duration // between attempts to watch, and between checks
	log    func(string)
	parent context.Context // the watching's; the watches are under it

	stop   context.CancelFunc // the current watch's
	events <-chan Event       // the current watch's

	seen    bool   // an event came since the last check
	last    Event  // the newest event the watch delivered
	unheard *Event // the queue's newest event, undelivered at the last check
}

// newJobWatch returns a watch of job id's events under parent, not yet
// watching (watch, again).
func newJobWatch(parent context.Context, q Queue, id string, every time.Duration, log func(string)) *jobWatch {
	return &jobWatch{queue: q, id: id, every: every, log: log, parent: parent}
}

// watch stops the current watch, if any, and watches again from the
// first event, once.
func (w *jobWatch) watch() error {
	w.close()
	w.stop, w.events, w.unheard = nil, nil, nil
	ctx, stop := context.WithCancel(w.parent)
	events, err := w.queue.Watch(ctx, w.id)
	if err != nil {
		stop()
		return err
	}
	w.stop, w.events = stop, events
	return nil
}

// heard notes e, delivered by the watch.
func (w *jobWatch) heard(e Event) { w.seen, w.last = true, e }

// again stops the current watch, if any, and watches again from the first
// event, retrying every w.every while the queue refuses; false when
// parent ended meanwhile. Replayed events change nothing for the caller.
func (w *jobWatch) again() bool {
	for {
		err := w.watch()
		if err == nil {
			return true
		}
		if w.parent.Err() != nil {
			return false
		}
		w.log(fmt.Sprintf("watch job %s: %v; watching again", w.id, err))
		if sleep(w.parent, w.every); w.parent.Err() != nil {
			return false
		}
	}
}

// close stops the current watch.
func (w *jobWatch) close() {
	if w.stop != nil {
		w.stop()
	}
}

// stalled reports whether the watch delivers nothing of what the queue
// holds: on a check with no event since the one before, it asks the queue
// (when it is a Recaller) for the job's newest event; that event still
// not delivered by the next such check means the watch is stuck, however
// it looks (a consumer lost with its server and never replaced), and is
// logged. A watch delivering anything is alive and costs no lookup.
func (w *jobWatch) stalled(ctx context.Context) bool {
	rc, ok := w.queue.(Recaller)
	if w.seen || !ok {
		w.seen, w.unheard = false, nil
		return false
	}
	if w.unheard != nil {
		w.log(fmt.Sprintf("job %s: its watch did not deliver the %s event the queue holds; watching again", w.id, w.unheard.Kind))
		return true
	}
	// A check takes no longer than the time between two.
	ctx, cancel := context.WithTimeout(ctx, w.every)
	defer cancel()
	e, err := rc.LastEvent(ctx, w.id)
	if err == nil && !sameEvent(e, w.last) {
		w.unheard = &e
	}
	return false
}

// sameEvent reports whether a and b are one stored event.
func sameEvent(a, b Event) bool {
	return a.Kind == b.Kind && a.Attempt == b.Attempt && a.Worker == b.Worker && a.Time.Equal(b.Time) && a.Text == b.Text
}
