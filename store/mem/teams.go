package mem

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/team"
)

// Teams is the team.Store view of a Store.
type Teams struct{ s *Store }

// Create stores a new team. It returns team.ErrExists if the name is taken
// and a *team.NameError (matching team.ErrInvalidName) if the name is not
// a canonical team name.
func (t *Teams) Create(ctx context.Context, c team.Config) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("create team %s: %w", c.Name, context.Cause(ctx))
	}
	if err := checkTeamName(c.Name); err != nil {
		return fmt.Errorf("create team: %w", err)
	}
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("create team %s: %w", c.Name, team.ErrClosed)
	}
	if _, ok := s.teams[c.Name]; ok {
		return fmt.Errorf("create team %s: %w", c.Name, team.ErrExists)
	}
	s.teams[c.Name] = cloneConfig(c)
	s.kickTeamLocked(c.Name)
	return nil
}

// Get returns the team called name, or team.ErrNotFound.
func (t *Teams) Get(ctx context.Context, name string) (team.Config, error) {
	if err := ctx.Err(); err != nil {
		return team.Config{}, fmt.Errorf("get team %s: %w", name, context.Cause(ctx))
	}
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return team.Config{}, fmt.Errorf("get team %s: %w", name, team.ErrClosed)
	}
	c, ok := s.teams[name]
	if !ok {
		return team.Config{}, fmt.Errorf("get team %s: %w", name, team.ErrNotFound)
	}
	return cloneConfig(c), nil
}

// List returns every team, sorted by name. It never reports undecodable
// teams: the store holds only decoded ones.
func (t *Teams) List(ctx context.Context) ([]team.Config, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list teams: %w", context.Cause(ctx))
	}
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("list teams: %w", team.ErrClosed)
	}
	out := make([]team.Config, 0, len(s.teams))
	for _, c := range s.teams {
		out = append(out, cloneConfig(c))
	}
	slices.SortFunc(out, func(a, b team.Config) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Update applies fn to a copy of the stored team while holding the team's
// lock, and stores the result. An error from fn is returned as is and
// leaves the team unchanged. fn runs exactly once; it must not call Update
// or Delete for the same team. It returns team.ErrNotFound if the team
// does not exist.
func (t *Teams) Update(ctx context.Context, name string, fn func(*team.Config) error) (team.Config, error) {
	s := t.s
	unlock, err := s.teamLocks.lock(ctx, s.done, name)
	if err != nil {
		return team.Config{}, fmt.Errorf("update team %s: %w", name, teamLockErr(err))
	}
	defer unlock()
	c, err := t.Get(ctx, name)
	if err != nil {
		return team.Config{}, err
	}
	if err := fn(&c); err != nil {
		return team.Config{}, err
	}
	if c.Name != name {
		return team.Config{}, fmt.Errorf("update team %s: the name cannot change (to %q)", name, c.Name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return team.Config{}, fmt.Errorf("update team %s: %w", name, team.ErrClosed)
	}
	if _, ok := s.teams[name]; !ok { // cannot happen while we hold the team lock
		return team.Config{}, fmt.Errorf("update team %s: %w", name, team.ErrNotFound)
	}
	s.teams[name] = cloneConfig(c)
	s.kickTeamLocked(name)
	return cloneConfig(c), nil
}

// Delete removes the team, its inboxes and the task list named after it,
// once check accepts the current team (check runs under the team's lock;
// its error is returned as is). It returns team.ErrNotFound if the team does
// not exist. Watchers of the team's inboxes are kicked.
func (t *Teams) Delete(ctx context.Context, name string, check func(team.Config) error) error {
	s := t.s
	unlock, err := s.teamLocks.lock(ctx, s.done, name)
	if err != nil {
		return fmt.Errorf("delete team %s: %w", name, teamLockErr(err))
	}
	defer unlock()
	c, err := t.Get(ctx, name)
	if err != nil {
		return err
	}
	if check != nil {
		if err := check(c); err != nil {
			return err
		}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("delete team %s: %w", name, team.ErrClosed)
	}
	delete(s.teams, name)
	s.kickTeamLocked(name)
	for k := range s.inboxes {
		if k.team == name {
			delete(s.inboxes, k)
		}
	}
	delete(s.lists, name)
	var kicks []*watcher
	for k, set := range s.watchers {
		if k.team == name {
			for w := range set {
				kicks = append(kicks, w)
			}
		}
	}
	s.mu.Unlock()
	for _, w := range kicks {
		w.Kick()
	}
	return nil
}

// checkTeamName refuses names that are not canonical team names.
func checkTeamName(name string) error {
	if err := team.ValidateTeamName(name); err != nil {
		return err
	}
	if team.Sanitize(name) != name {
		return &team.NameError{Kind: "team", Name: name, Reason: fmt.Sprintf("not canonical (stored teams are named %q)", team.Sanitize(name))}
	}
	return nil
}

func teamLockErr(err error) error {
	if errors.Is(err, errStoreClosed) {
		return team.ErrClosed
	}
	return err
}

// cloneConfig returns a deep copy of c. Unlike team.Config.Clone it never
// fails, whatever c holds.
func cloneConfig(c team.Config) team.Config {
	out := c
	out.HiddenPaneIDs = slices.Clone(c.HiddenPaneIDs)
	out.TeamAllowedPaths = slices.Clone(c.TeamAllowedPaths)
	out.Extra = c.Extra.Clone()
	if c.Members != nil {
		out.Members = make([]team.Member, len(c.Members))
		for i, m := range c.Members {
			out.Members[i] = cloneMember(m)
		}
	}
	return out
}

func cloneMember(m team.Member) team.Member {
	out := m
	out.Subscriptions = slices.Clone(m.Subscriptions)
	if m.IsActive != nil {
		v := *m.IsActive
		out.IsActive = &v
	}
	out.Extra = m.Extra.Clone()
	return out
}

// Watch returns a channel that receives a coalesced kick after every
// change of the team (updated or deleted). It is closed when ctx is done
// or the store is closed. It returns team.ErrNotFound if the team does
// not exist.
func (t *Teams) Watch(ctx context.Context, name string) (<-chan struct{}, error) {
	if _, err := t.Get(ctx, name); err != nil {
		return nil, fmt.Errorf("watch team %s: %w", name, err)
	}
	ch, err := t.s.watch(ctx, teamKey(name))
	if err != nil {
		return nil, fmt.Errorf("watch team %s: %w", name, err)
	}
	return ch, nil
}

// teamKey is the watcher key of a team's file.
func teamKey(name string) inboxKey { return inboxKey{name, "\x00team"} }

// kickTeamLocked kicks the watchers of the team. s.mu must be held.
func (s *Store) kickTeamLocked(name string) {
	for w := range s.watchers[teamKey(name)] {
		w.Kick()
	}
}
