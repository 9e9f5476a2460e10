package nats

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// maxConsumers is the consumer limit troupe sets on its streams and
// buckets. Every idle teammate on NATS holds an inbox watch (a consumer on
// the mail stream) and a task-list watch (a consumer on the tasks bucket),
// and every scan adds one for a moment; nats-server 2.11 and later allow
// 1,000 consumers per stream unless the stream says otherwise, so a team
// of 1,000 teammates could no longer list its tasks ("maximum consumers
// limit reached", found by troupe bench team).
const maxConsumers = 1 << 20

// fitConsumers raises str's consumer limit to maxConsumers when it is
// unset (the server's default then applies) or lower. A server or account
// that refuses is logged, not fatal: the stream works as before, up to its
// limit.
func (s *Store) fitConsumers(ctx context.Context, str jetstream.Stream) jetstream.Stream {
	cfg := str.CachedInfo().Config
	if cfg.MaxConsumers >= maxConsumers {
		return str
	}
	from := cfg.MaxConsumers
	cfg.MaxConsumers = maxConsumers
	up, err := s.js.UpdateStream(ctx, cfg)
	if err != nil {
		s.log.Warn("nats store: could not raise the consumer limit; a team of about a thousand teammates or more may hit it", "stream", cfg.Name, "limit", from, "err", err)
		return str
	}
	return up
}
