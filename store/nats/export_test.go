package nats

import (
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
