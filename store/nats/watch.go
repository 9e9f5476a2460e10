package nats

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/troupe-dev/troupe/internal/kick"
	"github.com/troupe-dev/troupe/mailbox"
)

// Watch returns a channel that receives a coalesced kick soon after a
// message is stored in agent's inbox, pushed by an ordered consumer of the
// team's mail that starts after the stream's current last message (one per
// team and store, shared by all its inbox watches: fan.go). Every watch
// is also kicked after a reconnect. The channel is closed when ctx is done
// or the store is closed.
func (m *Mail) Watch(ctx context.Context, teamName, agent string) (<-chan struct{}, error) {
	s := m.s
	if s.isClosed() {
		return nil, mailbox.ErrClosed
	}
	prefix := s.mailSubject + "." + token(teamName) + "."
	ch, err := s.subscribe(ctx, "mail "+prefix, token(agent), func(ctx context.Context, deliver func(string), ended func()) (func(), error) {
		return s.watchMail(ctx, prefix, deliver)
	})
	if err != nil {
		return nil, fmt.Errorf("watch inbox of %s in team %s: %w", agent, teamName, s.closedAs(err, mailbox.ErrClosed))
	}
	return ch, nil
}

// watchMail starts the consumer of the inboxes under prefix that a team's
// inbox watches share; deliver gets the agent token of each message.
func (s *Store) watchMail(ctx context.Context, prefix string, deliver func(route string)) (func(), error) {
	rctx, cancel, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	var info *jetstream.StreamInfo
	err = s.retry(rctx, "watch: stream info", attemptTimeout, func(ctx context.Context, _ int) (err error) {
		info, err = s.mail.Info(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	cons, err := s.orderedConsumer(rctx, s.mail, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{prefix + ">"},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    info.State.LastSeq + 1,
		HeadersOnly:    true,
		// The server drops a consumer nobody pulls from for this long (a
		// stopped watch); a watch cut off longer recreates it.
		InactiveThreshold: time.Minute,
	})
	if err != nil {
		return nil, err
	}
	cc, err := cons.Consume(func(msg jetstream.Msg) {
		agent, _, _ := strings.Cut(strings.TrimPrefix(msg.Subject(), prefix), ".")
		if md, err := msg.Metadata(); err == nil {
			s.seen.note(prefix+agent, md.Sequence.Stream, time.Now())
		}
		deliver(agent)
	}, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		s.log.Debug("nats store: inbox watch", "inboxes", prefix, "err", err)
	}))
	if err != nil {
		return nil, err
	}
	return func() {
		cc.Stop()
		if s.isClosed() {
			return // the server drops it after InactiveThreshold
		}
		// Gone at once rather than after InactiveThreshold.
		ctx, cancel := context.WithTimeout(s.ctx, attemptTimeout)
		defer cancel()
		if err := s.mail.DeleteConsumer(ctx, cons.CachedInfo().Name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			s.log.Debug("nats store: delete an inbox watch's consumer", "inboxes", prefix, "err", err)
		}
	}, nil
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
