package nats

import "github.com/troupe-dev/troupe/team"

// DecodedTeam returns the decoding of team name that s keeps (teamDecodes),
// for tests of its reuse.
func DecodedTeam(s *Store, name string) (team.Config, bool) {
	s.decoded.mu.Lock()
	defer s.decoded.mu.Unlock()
	d, ok := s.decoded.teams[name]
	return d.cfg, ok
}
