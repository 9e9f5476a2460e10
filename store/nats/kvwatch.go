package nats

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// Watch returns a channel that receives a coalesced kick soon after the
// team's file is updated or deleted, pushed by a KV watch that starts
// after its current value. Every watch is also kicked after a reconnect.
// The channel is closed when ctx is done or the store is closed. It
// returns team.ErrNotFound if the team does not exist.
func (t *Teams) Watch(ctx context.Context, name string) (<-chan struct{}, error) {
	if err := checkTeamName(name); err != nil {
		return nil, fmt.Errorf("watch team: %w", err)
	}
	if _, err := t.Get(ctx, name); err != nil {
		return nil, fmt.Errorf("watch team %s: %w", name, err)
	}
	ch, err := t.s.watchKV(ctx, t.s.teams, teamKey(name))
	if err != nil {
		return nil, fmt.Errorf("watch team %s: %w", name, t.s.closedAs(err, team.ErrClosed))
	}
	return ch, nil
}

// Watch returns a channel that receives a coalesced kick soon after a task
// of list is created, updated or deleted (tasklist.Watcher), pushed by a
// KV watch. Every watch is also kicked after a reconnect. The channel is
// closed when ctx is done or the store is closed.
func (ts *Tasks) Watch(ctx context.Context, list string) (<-chan struct{}, error) {
	ch, err := ts.s.watchKV(ctx, ts.s.tasks, token(list)+".t.*")
	if err != nil {
		return nil, fmt.Errorf("watch task list %s: %w", list, ts.s.closedAs(err, tasklist.ErrClosed))
	}
	return ch, nil
}

// watchKV kicks a watcher on every change of the keys of kv matching key
// after the watch started. The store's watches of one key share one KV
// watch (fan.go).
func (s *Store) watchKV(ctx context.Context, kv jetstream.KeyValue, key string) (<-chan struct{}, error) {
	if s.isClosed() {
		return nil, errStoreClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	return s.subscribe(ctx, "kv "+kv.Bucket()+" "+key, "", func(ctx context.Context, deliver func(string), ended func()) (func(), error) {
		kw, cancel, err := s.startKVWatch(ctx, kv, key)
		if err != nil {
			return nil, err
		}
		stopped := make(chan struct{})
		var once sync.Once
		stop := func() {
			once.Do(func() {
				close(stopped)
				if err := kw.Stop(); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
					s.log.Debug("nats store: stop a KV watch", "key", key, "err", err)
				}
				cancel()
			})
		}
		if !s.goFunc(func(sctx context.Context) {
			for {
				select {
				case _, ok := <-kw.Updates():
					if !ok {
						stop()
						ended()
						return
					}
					deliver("")
				case <-stopped:
					return
				case <-sctx.Done():
					stop()
					ended()
					return
				}
			}
		}) {
			stop()
			return nil, errStoreClosed
		}
		return stop, nil
	})
}

var (
	_ team.Watcher     = (*Teams)(nil)
	_ tasklist.Watcher = (*Tasks)(nil)
)

// startKVWatch starts a KV watch that lives until the returned cancel (or
// Close). kv.Watch takes one ctx for both its start and its life, so an
// attempt is given up, and retried, when its start goes unanswered for
// attemptTimeout (a stream leader lost mid-request), until the request
// timeout (of connected time) or ctx ends.
func (s *Store) startKVWatch(ctx context.Context, kv jetstream.KeyValue, key string) (jetstream.KeyWatcher, context.CancelFunc, error) {
	ctx, stop := s.budget(ctx, s.opts.RequestTimeout) // outage.go: an outage does not count
	defer stop()
	var kw jetstream.KeyWatcher
	var cancel context.CancelFunc
	err := s.retry(ctx, "watch "+kv.Bucket()+" "+key, attemptTimeout, func(actx context.Context, _ int) error {
		wctx, wcancel := context.WithCancel(s.ctx)
		type started struct {
			kw  jetstream.KeyWatcher
			err error
		}
		done := make(chan started, 1)
		go func() {
			w, err := kv.Watch(wctx, key, jetstream.UpdatesOnly())
			done <- started{w, err}
		}()
		select {
		case r := <-done:
			if r.err != nil {
				wcancel()
				return r.err
			}
			kw, cancel = r.kw, wcancel
			return nil
		case <-actx.Done():
			wcancel()
			if r := <-done; r.err == nil {
				r.kw.Stop()
			}
			return context.Cause(actx)
		}
	})
	return kw, cancel, err
}
