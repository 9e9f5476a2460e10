package nats

import (
	"context"

	"github.com/troupe-dev/troupe/internal/kick"
)

// A store's watches share their server-side consumers: all the watches of
// one process on one task list share one KV watch, and all its watches of
// inboxes of one team share one headers-only consumer of the team's mail,
// which kicks the watch of the inbox each message is for. A thousand idle
// teammates in one process so hold two consumers, not two thousand, whose
// pull requests and idle heartbeats were most of an idle team's CPU on
// NATS, and a teammate that stops and starts its task-list watch on every
// wake joins the running one instead of creating a consumer.
//
// A watch that joins a running consumer is kicked for every message that
// consumer delivers after the join, so it sees every change made after
// Watch returned (and maybe one made just before, a spurious kick, which
// the contract allows). When the consumer ends (its start failed, or its
// updates stopped), every watch sharing it is closed, as a watch of its
// own would have been.

// fan is one server-side watch and the local watches it kicks.
type fan struct {
	key   string
	ready chan struct{} // closed once start returned
	err   error         // start's error; set before ready is closed
	stop  func()        // ends the server-side watch; set before ready is closed

	// subs are the local watches by route ("" gets every kick); guarded
	// by the store's mu.
	subs map[string]map[*watcher]struct{}
	n    int // local watches; guarded by the store's mu
}

// fanStart starts the server-side watch of a fan: deliver(route) kicks the
// watches of route and those of every route; ended(), called at most once,
// closes them all when the watch ends on its own. It returns the function
// that stops the watch.
type fanStart func(ctx context.Context, deliver func(route string), ended func()) (stop func(), err error)

// subscribe returns a local watch of route on the shared watch key, started
// with start by the first watch of key. The watch is closed when ctx ends,
// the store closes or the shared watch ends.
func (s *Store) subscribe(ctx context.Context, key, route string, start fanStart) (<-chan struct{}, error) {
	w := kick.New()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errStoreClosed
	}
	f := s.fans[key]
	first := f == nil
	if first {
		f = &fan{key: key, ready: make(chan struct{}), subs: map[string]map[*watcher]struct{}{}}
		s.fans[key] = f
	}
	if f.subs[route] == nil {
		f.subs[route] = map[*watcher]struct{}{}
	}
	f.subs[route][w] = struct{}{}
	f.n++
	s.watchers[w] = struct{}{}
	s.mu.Unlock()

	if first {
		f.stop, f.err = start(ctx, func(route string) { s.deliver(f, route) }, func() { s.endFan(f) })
		if f.err != nil {
			s.mu.Lock()
			if s.fans[key] == f {
				delete(s.fans, key)
			}
			s.mu.Unlock()
		}
		close(f.ready)
	} else {
		select {
		case <-f.ready:
		case <-ctx.Done():
			s.unsubscribe(f, route, w)
			return nil, context.Cause(ctx)
		}
	}
	if f.err != nil {
		s.unsubscribe(f, route, w)
		return nil, f.err
	}
	// No goroutine per watch (a thousand idle teammates would hold a
	// thousand): the watch ends from ctx's AfterFunc, from endFan, or
	// from Close (closeFans).
	stopAfter := context.AfterFunc(ctx, func() { s.unsubscribe(f, route, w) })
	w.OnClose(stopAfter)
	if s.isClosed() {
		s.unsubscribe(f, route, w)
		return nil, errStoreClosed
	}
	return w.C(), nil
}

// deliver kicks f's watches of route and its watches of every route.
func (s *Store) deliver(f *fan, route string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range f.subs[route] {
		w.Kick()
	}
	if route != "" {
		for w := range f.subs[""] {
			w.Kick()
		}
	}
}

// unsubscribe removes and closes watch w; the last watch of f stops it.
func (s *Store) unsubscribe(f *fan, route string, w *watcher) {
	s.mu.Lock()
	var stop func()
	if _, ok := f.subs[route][w]; ok {
		delete(f.subs[route], w)
		if len(f.subs[route]) == 0 {
			delete(f.subs, route)
		}
		f.n--
		if f.n == 0 && s.fans[f.key] == f {
			delete(s.fans, f.key)
			stop = f.stop
		}
	}
	delete(s.watchers, w)
	s.mu.Unlock()
	w.Close()
	if stop != nil {
		stop()
	}
}

// endFan closes every watch of f, whose server-side watch ended.
func (s *Store) endFan(f *fan) {
	s.mu.Lock()
	if s.fans[f.key] == f {
		delete(s.fans, f.key)
	}
	ws := f.takeLocked(s)
	s.mu.Unlock()
	for _, w := range ws {
		w.Close()
	}
}

// takeLocked removes every watch of f and returns them. s.mu is held.
func (f *fan) takeLocked(s *Store) []*watcher {
	var ws []*watcher
	for _, set := range f.subs {
		for w := range set {
			ws = append(ws, w)
			delete(s.watchers, w)
		}
	}
	f.subs, f.n = map[string]map[*watcher]struct{}{}, 0
	return ws
}

// closeFans stops every shared watch and closes its watches (Close).
func (s *Store) closeFans() {
	s.mu.Lock()
	fans := s.fans
	s.fans = map[string]*fan{}
	var ws []*watcher
	for _, f := range fans {
		ws = append(ws, f.takeLocked(s)...)
	}
	s.mu.Unlock()
	for _, w := range ws {
		w.Close()
	}
	for _, f := range fans {
		<-f.ready
		if f.stop != nil {
			f.stop()
		}
	}
}
