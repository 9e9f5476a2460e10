package nats

import (
	"context"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/troupe-dev/troupe/team"
)

// DecodedTeam returns the decoding of team name that s keeps (teamDecodes),
// for tests of its reuse.
func DecodedTeam(s *Store, name string) (team.Config, bool) {
	s.decoded.mu.Lock()
	defer s.decoded.mu.Unlock()
	d, ok := s.decoded.teams[name]
	return d.cfg, ok
}

// WrapTeamsKV replaces s's team bucket with wrap's, for tests that make it
// answer as a replica behind the leader or a lost reply would. Call it
// before s is used concurrently.
func WrapTeamsKV(s *Store, wrap func(jetstream.KeyValue) jetstream.KeyValue) {
	s.teams = wrap(s.teams)
}

// SetDirectBatch makes inbox reads ask for n messages per direct get
// until the test ends.
func SetDirectBatch(t testing.TB, n int) {
	old := directBatchSize.Swap(int32(n))
	t.Cleanup(func() { directBatchSize.Store(old) })
}

// ReadByConsumer makes inbox reads go through a consumer, as before
// batched direct gets, until the test ends.
func ReadByConsumer(t testing.TB) {
	byConsumer.Store(true)
	t.Cleanup(func() { byConsumer.Store(false) })
}

// InBytes returns how many bytes s's connection has received.
func InBytes(s *Store) uint64 { return s.nc.Stats().InBytes }

// StartEmbedded starts an embedded NATS server with opts for t and
// returns its client port.
func StartEmbedded(t testing.TB, opts *server.Options) int { return startEmbedded(t, opts) }

// LeaderTeam reads team name from the stream's leader, which has every
// acknowledged write (a Get may be answered by a replica behind it).
func LeaderTeam(t testing.TB, s *Store, name string) team.Config {
	t.Helper()
	c, _, err := s.Teams().getWith(t.Context(), name, func(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
		return s.leaderGet(ctx, s.teams, key)
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ReadFloor returns the read floor s keeps for an inbox (readfloor.go).
func ReadFloor(s *Store, teamName, agent string) uint64 {
	f, _ := s.floors.get(s.inboxSubject(teamName, agent))
	return f
}

// OutMsgs returns how many messages (requests included) s's connection
// has sent.
func OutMsgs(s *Store) uint64 { return s.nc.Stats().OutMsgs }

// WrapReadMarksKV replaces s's read-marks bucket with wrap's. Call it
// before s is used concurrently.
func WrapReadMarksKV(s *Store, wrap func(jetstream.KeyValue) jetstream.KeyValue) {
	s.mailRead = wrap(s.mailRead)
}

// ReadHook makes s's reads call f at each stage ("floor", "scanned").
// Call it before s is used concurrently.
func ReadHook(s *Store, f func(stage string)) { s.readHook = f }

// ConnectedURL returns the URL of the server s is connected to.
func ConnectedURL(s *Store) string { return s.nc.ConnectedUrl() }
