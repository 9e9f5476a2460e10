package file

import (
	"context"

	"github.com/troupe-dev/troupe/team"
)

var _ team.ActiveSetter = (*Teams)(nil)

// SetActive marks member name of team teamName active or idle
// (team.ActiveSetter). The flips that this store's callers ask for while
// one is being written are written together in the next update
// (internal/flagbatch), so that the teammates of one process going idle at
// once take the team's lock a few times, not once each: each update
// rewrites the whole team file. It returns team.ErrNoMember for a member
// not on the roster.
func (ts *Teams) SetActive(ctx context.Context, teamName, name string, active bool) error {
	if err := ts.begin("update", teamName); err != nil {
		return err
	}
	return ts.s.flags.SetActive(ctx, func(ctx context.Context, name string, fn func(*team.Config) error) (team.Config, error) {
		return team.Config{}, ts.Mutate(ctx, name, fn) // the flips keep nothing
	}, teamName, name, active)
}
