package swarm

import "context"

// inboxPump reads a teammate's inbox (Teammate.pump) each time its watch
// kicks. While the teammate works (runs, reports, waits for a verdict) a
// goroutine of the pump's own does it, looping on the watch, so that mail
// reaches a running model and a permission answer the call waiting for
// it. While the teammate waits for work (next) no such goroutine runs:
// the run goroutine receives the kicks itself and starts a goroutine for
// one read per kick, so that an idle teammate holds one goroutine, not
// two (a thousand idle teammates held a thousand pump goroutines and
// their stacks), and a woken model still does not wait for the pump's
// writes of the team and the inbox (Teammate.pump). At most one read runs
// at a time, and one receiver takes from the watch. Its methods are called
// by the run goroutine only.
type inboxPump struct {
	tm   *Teammate
	kick <-chan struct{} // the inbox watch; nil once it was closed
	// owed says the inbox has not been read since the watch began: a
	// message that came before it gave no kick.
	owed bool

	// done is closed when the pump's goroutine has ended: the looping one
	// (while stop is non-nil; closing stop ends it after the read it may
	// be doing), or one started for one read. done is nil while no
	// goroutine of the pump runs, stop while no looping one is wanted.
	stop, done chan struct{}
	// closed is set by the looping goroutine, before done is closed, when
	// the watch's channel closed (ctx ended, or the store closed).
	closed bool

	// tasks is the teammate's task-list watch (next), made once; closedKick
	// once it was closed.
	tasks <-chan struct{}
}

// closedKick stands for a task-list watch that was closed: it is never
// ready, and next does not watch again.
var closedKick = make(<-chan struct{})

// background hands the pump to a looping goroutine until foreground. It
// starts after a read still running, so that reads never overlap.
func (p *inboxPump) background(ctx context.Context) {
	if p.stop != nil {
		return
	}
	prev := p.done
	stop, done := make(chan struct{}), make(chan struct{})
	p.stop, p.done = stop, done
	owed, kick := p.owed, p.kick
	p.owed = false
	go func() {
		defer close(done)
		if prev != nil {
			<-prev
			if p.closed { // seen by the goroutine before this one
				kick = nil
			}
		}
		if owed {
			p.tm.pumpLogged(ctx)
		}
		if kick == nil {
			return
		}
		for {
			select {
			case <-stop:
				return
			case <-p.tm.activeTimer.C:
				p.tm.flushWake(ctx)
			case _, ok := <-kick:
				if !ok {
					p.closed = true
					return
				}
				p.tm.pumpLogged(ctx)
			}
		}
	}()
}

// foreground ends the pump's looping goroutine: from now on the caller
// receives the kicks (watch). It does not wait: a read that goroutine is
// doing (which may wait for the team's lock) goes on, and watch reports
// it as a read in progress until it is done (read).
func (p *inboxPump) foreground() {
	if p.stop != nil {
		close(p.stop)
		p.stop = nil
	}
}

// finish ends the pump's goroutine and waits for it (Run's end).
func (p *inboxPump) finish() {
	p.foreground()
	if p.done != nil {
		<-p.done
		p.read()
	}
}

// watch returns what a waiting run goroutine selects on: the watch, or,
// while a read it started runs, that read's end.
func (p *inboxPump) watch() (kick <-chan struct{}, reading <-chan struct{}) {
	if p.done != nil {
		return nil, p.done
	}
	return p.kick, nil
}

// kicked handles a receive from the watch (ok false: it closed): the read
// runs on a goroutine of its own until it is done (read).
func (p *inboxPump) kicked(ctx context.Context, ok bool) {
	if !ok {
		p.kick = nil
		return
	}
	done := make(chan struct{})
	p.done = done
	go func() {
		defer close(done)
		p.tm.pumpLogged(ctx)
	}()
}

// read notes that the pump's goroutine has ended (its done is closed).
func (p *inboxPump) read() {
	p.done = nil
	if p.closed {
		p.kick = nil
	}
}

// catchUp starts a read that is owed, as kicked does.
func (p *inboxPump) catchUp(ctx context.Context) {
	if p.owed && p.done == nil {
		p.owed = false
		p.kicked(ctx, true)
	}
}

// pumpLogged reads the inbox, logging a failure that is not the end of
// ctx.
func (tm *Teammate) pumpLogged(ctx context.Context) {
	if err := tm.pump(ctx); err != nil && ctx.Err() == nil {
		tm.cfg.Log.Warn("read inbox", "agent", tm.cfg.Name, "err", err)
	}
}
