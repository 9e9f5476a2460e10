package nats

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/troupe-dev/troupe/internal/kick"
	"github.com/troupe-dev/troupe/mailbox"
)

// Watch returns a channel that receives a coalesced kick soon after a
// message is stored in agent's inbox, pushed by an ordered consumer that
// starts after the stream's current last message. Every watch is also
// kicked after a reconnect. The channel is closed when ctx is done or the
// store is closed.
func (m *Mail) Watch(ctx context.Context, teamName, agent string) (<-chan struct{}, error) {
	s := m.s
	rctx, cancel, err := s.begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("watch inbox of %s in team %s: %w", agent, teamName, s.closedAs(err, mailbox.ErrClosed))
	}
	defer cancel()
	var info *jetstream.StreamInfo
	err = s.retry(rctx, "watch: stream info", attemptTimeout, func(ctx context.Context, _ int) (err error) {
		info, err = s.mail.Info(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("watch inbox of %s in team %s: %w", agent, teamName, s.closedAs(err, mailbox.ErrClosed))
	}
	cons, err := s.orderedConsumer(rctx, s.mail, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{s.inboxSubject(teamName, agent) + ".*"},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    info.State.LastSeq + 1,
		HeadersOnly:    true,
		// The server drops a consumer nobody pulls from for this long (a
		// stopped watch); a watch cut off longer recreates it.
		InactiveThreshold: time.Minute,
	})
	if err != nil {
		return nil, fmt.Errorf("watch inbox of %s in team %s: %w", agent, teamName, s.closedAs(err, mailbox.ErrClosed))
	}
	w := kick.New()
	cc, err := cons.Consume(func(msg jetstream.Msg) { w.Kick() },
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			s.log.Debug("nats store: inbox watch", "team", teamName, "agent", agent, "err", err)
		}))
	if err != nil {
		return nil, fmt.Errorf("watch inbox of %s in team %s: %w", agent, teamName, s.closedAs(err, mailbox.ErrClosed))
	}
	s.mu.Lock()
	s.watchers[w] = struct{}{}
	s.mu.Unlock()
	stop := func() {
		cc.Stop()
		s.mu.Lock()
		delete(s.watchers, w)
		s.mu.Unlock()
		w.Close()
	}
	if !s.goFunc(func(sctx context.Context) {
		select {
		case <-ctx.Done():
		case <-sctx.Done():
		}
		stop()
	}) {
		stop()
		return nil, fmt.Errorf("watch inbox of %s in team %s: %w", agent, teamName, mailbox.ErrClosed)
	}
	return w.C(), nil
}

// kickAll kicks every watch, after a reconnect: messages stored while the
// connection was down are re-read by the watchers.
func (s *Store) kickAll() {
	s.mu.Lock()
	ws := make([]*watcher, 0, len(s.watchers))
	for w := range s.watchers {
		ws = append(ws, w)
	}
	s.mu.Unlock()
	for _, w := range ws {
		w.Kick()
	}
}

// watcher is one Watch channel.
type watcher = kick.Signal

// orderedConsumer creates an ordered consumer on str, retrying an attempt
// left unanswered (a stream leader lost mid-request) until ctx ends. An
// abandoned attempt's consumer, if the server made it, expires unused.
func (s *Store) orderedConsumer(ctx context.Context, str jetstream.Stream, cfg jetstream.OrderedConsumerConfig) (cons jetstream.Consumer, err error) {
	err = s.retry(ctx, "create a consumer on "+str.CachedInfo().Config.Name, attemptTimeout, func(ctx context.Context, _ int) error {
		cons, err = str.OrderedConsumer(ctx, cfg)
		return err
	})
	return cons, err
}
