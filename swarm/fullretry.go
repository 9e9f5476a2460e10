package swarm

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
)

// DiskFull reports whether err is a write that failed for want of room:
// the disk is full (ENOSPC) or the user's quota spent (EDQUOT).
func DiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// The bounds of the wait between two tries of a send the disk refused.
const (
	fullRetryMin = 50 * time.Millisecond
	fullRetryMax = 5 * time.Second
	// fullRemind is how often a send still refused is reported again.
	fullRemind = 30 * time.Second
)

// RetryFull returns mail whose Send, when the disk is full (DiskFull), is
// tried again, every 50 ms at first and then less often (up to every 5 s),
// until it lands or ctx ends: a protocol message (an idle notification, a
// report, a shutdown approval) is not dropped because a disk filled up for
// a while. While it fails, on sees a warning from agent (at once, then
// every 30 s), and a last event once it went through, so that whoever
// watches the team (stderr, the TUI, stream-json) knows why nothing moves.
// A broadcast some of whose copies were delivered is not tried again (the
// others would get it twice): its error is returned. on may be nil.
func RetryFull(mail mailbox.Store, agent string, now func() time.Time, on func(Event)) mailbox.Store {
	if now == nil {
		now = time.Now
	}
	return &retryFull{Store: mail, agent: agent, now: now, on: on}
}

type retryFull struct {
	mailbox.Store
	agent string
	now   func() time.Time
	on    func(Event)
}

func (r *retryFull) Send(ctx context.Context, teamName, to string, msg mailbox.Message) ([]mailbox.Delivery, error) {
	ds, err := r.Store.Send(ctx, teamName, to, msg)
	if err == nil || !DiskFull(err) || len(ds) > 0 {
		return ds, err
	}
	what := describe(msg, to)
	start := r.now()
	r.event(fmt.Sprintf("disk full: %s is not delivered yet; trying again until there is room (%v)", what, err))
	reminded := start
	gap := fullRetryMin
	tries := 1
	for {
		t := time.NewTimer(gap)
		select {
		case <-ctx.Done():
			t.Stop()
			r.event(fmt.Sprintf("gave up delivering %s after %d tries: %v (the disk was full: %v)", what, tries, context.Cause(ctx), err))
			return nil, fmt.Errorf("%w (and the disk was full: %w)", context.Cause(ctx), err)
		case <-t.C:
		}
		tries++
		ds, err = r.Store.Send(ctx, teamName, to, msg)
		if err == nil || !DiskFull(err) || len(ds) > 0 {
			if err == nil {
				r.event(fmt.Sprintf("disk has room again: %s delivered after %d tries (%s)", what, tries, r.now().Sub(start).Round(time.Millisecond)))
			}
			return ds, err
		}
		if r.now().Sub(reminded) >= fullRemind {
			reminded = r.now()
			r.event(fmt.Sprintf("disk still full: %s waits to be delivered (%d tries over %s)", what, tries, reminded.Sub(start).Round(time.Second)))
		}
		gap = min(2*gap, fullRetryMax)
	}
}

func (r *retryFull) event(text string) {
	if r.on != nil {
		r.on(Event{Time: r.now(), Agent: r.agent, Kind: EventWarning, Text: text})
	}
}

// describe names a message for the timeline: its kind and recipient.
func describe(msg mailbox.Message, to string) string {
	kind := "a message"
	if f, err := mailbox.Decode(msg.Text); err == nil {
		if _, plain := f.(mailbox.Text); !plain {
			kind = "the " + f.Kind()
		}
	}
	return kind + " to " + to
}
