package team

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"
	"unicode/utf8"
)

// Store persists team files. Implementations are safe for concurrent use by
// many goroutines and, for stores shared between processes, by many
// processes: Update is an atomic read-modify-write of one team.
//
// Names passed to a Store are canonical (see CanonicalName); the functions
// of this package validate them before they reach a Store.
type Store interface {
	// Create stores a new team. It returns ErrExists if the name is taken.
	Create(ctx context.Context, c Config) error
	// Get returns the team called name, or ErrNotFound.
	Get(ctx context.Context, name string) (Config, error)
	// List returns every team, sorted by name. A team whose file cannot be
	// decoded is skipped and reported through the returned error, which is
	// non-nil alongside the good teams.
	List(ctx context.Context) ([]Config, error)
	// Update applies fn to the stored team and stores the result
	// atomically. An error from fn aborts the update and is returned as is.
	// It returns ErrNotFound if the team does not exist.
	Update(ctx context.Context, name string, fn func(*Config) error) (Config, error)
	// Delete removes the team with its mailboxes and its task list, after
	// check accepts the current team file (check runs while the team is
	// locked; its error aborts the delete and is returned as is). It returns
	// ErrNotFound if the team does not exist.
	Delete(ctx context.Context, name string, check func(Config) error) error
}

// Watcher is implemented by stores that can tell a reader that a team
// changed: its file was rewritten (a member added, removed, gone active or
// idle) or the team was deleted.
type Watcher interface {
	// Watch returns a channel that receives a coalesced kick soon after
	// the team called name changes, by this process or another. A kick
	// may be spurious; the reader re-reads. The channel is closed when
	// ctx is done or the store is closed. It returns ErrNotFound if the
	// team does not exist.
	Watch(ctx context.Context, name string) (<-chan struct{}, error)
}

// CreateOptions describe a new team.
type CreateOptions struct {
	Name        string
	Description string
	SessionID   string // the lead's session id
	LeadType    string // agentType of the lead member
	LeadModel   string
	// LeadMode is the lead's permission mode, recorded on its member:
	// its pane teammates never run in a wider one.
	LeadMode string
	Cwd      string
	Now      time.Time
	// Pick chooses suffix words when the name is taken; pick(n) returns a
	// value in [0, n). Required.
	Pick func(n int) int
}

// Create validates and canonicalises opts.Name and stores a new team whose
// only member is the lead. A name already in use gets a word suffix
// ("alpha-swift-comet"); the returned Config carries the final name.
func Create(ctx context.Context, s Store, opts CreateOptions) (Config, error) {
	name, err := CanonicalName(opts.Name)
	if err != nil {
		return Config{}, err
	}
	for _, f := range []struct{ name, v string }{{"description", opts.Description}, {"lead agent type", opts.LeadType},
		{"lead model", opts.LeadModel}, {"lead mode", opts.LeadMode}, {"cwd", opts.Cwd}, {"session id", opts.SessionID}} {
		if !utf8.ValidString(f.v) {
			return Config{}, fmt.Errorf("create team %s: %s: not valid UTF-8", name, f.name)
		}
	}
	if opts.Pick == nil {
		return Config{}, errors.New("team: create: CreateOptions.Pick is nil")
	}
	now := opts.Now.UnixMilli()
	try := name
	for attempt := 0; attempt < 32; attempt++ {
		c := Config{
			Name:          try,
			Description:   opts.Description,
			CreatedAt:     now,
			LeadAgentID:   LeadID(try),
			LeadSessionID: opts.SessionID,
			Members: []Member{{
				AgentID:     LeadID(try),
				Name:        LeadName,
				AgentType:   opts.LeadType,
				Model:       opts.LeadModel,
				Mode:        opts.LeadMode,
				JoinedAt:    now,
				TmuxPaneID:  PaneLeader,
				Cwd:         opts.Cwd,
				BackendType: BackendInProcess,
			}},
		}
		err := s.Create(ctx, c)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, ErrExists) {
			return Config{}, fmt.Errorf("create team %s: %w", try, err)
		}
		try = SuffixedName(name, opts.Pick)
	}
	return Config{}, fmt.Errorf("create team %s: no free name after 32 tries: %w", name, ErrExists)
}

// AddMember adds m to team. It fills AgentID, Color (when empty) and
// JoinedAt (when zero, from now). Adding a member whose agent id is already
// on the roster with the same name returns the stored member unchanged, so a
// retried spawn is idempotent; any other name clash (case-insensitive)
// returns ErrMemberExists.
func AddMember(ctx context.Context, s Store, teamName string, m Member, now time.Time) (Member, error) {
	e, err := AddEdit(m, now)
	if err != nil {
		return Member{}, fmt.Errorf("add to team %s: %w", teamName, err)
	}
	return edit(ctx, s, teamName, e)
}

// UpdateMember applies fn to the member called name and returns the
// member as stored (a copy). fn must not change the member's name or agent
// id, nor keep m once it returns. When fn leaves the member as it was,
// nothing is written (the team's lock is still taken for the read).
func UpdateMember(ctx context.Context, s Store, teamName, name string, fn func(*Member) error) (Member, error) {
	var out Member
	err := mutate(ctx, s, teamName, func(c *Config) error {
		m, ok := c.Member(name)
		if !ok {
			return noMember(c, name)
		}
		before := m.Clone()
		if err := fn(m); err != nil {
			return err
		}
		if m.AgentID != before.AgentID || m.Name != before.Name {
			return fmt.Errorf("update member %s: name and agent id cannot change", name)
		}
		out = m.Clone()
		if reflect.DeepEqual(before, *m) {
			return errUnchanged
		}
		return nil
	})
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	return out, err
}

// errUnchanged aborts an Update whose function changed nothing, so that
// the store does not rewrite the team for it.
var errUnchanged = errors.New("team: nothing to change")

// Mutator is implemented by stores that can change a team without handing
// the result back: fn must not keep c, nor anything it points to, once it
// returns, so the store need not copy the roster for its caller (a team
// of a thousand members was copied twice per update). Otherwise Mutate is
// Update: an error from fn aborts it and is returned as is, fn may run
// again, and a missing team gives ErrNotFound. AddMember, UpdateMember and
// RemoveMember use it when the store has it.
type Mutator interface {
	Mutate(ctx context.Context, name string, fn func(c *Config) error) error
}

// mutate applies fn to team name through s's Mutate, or its Update.
func mutate(ctx context.Context, s Store, name string, fn func(*Config) error) error {
	if m, ok := s.(Mutator); ok {
		return m.Mutate(ctx, name, fn)
	}
	_, err := s.Update(ctx, name, fn)
	return err
}

// SetActive marks the member active (working) or idle, through the store's
// Edit when it has one (Editor; the stores batch many members' flips
// into one write). A member already so marked is not written again; one
// without the flag counts as active (Active).
func SetActive(ctx context.Context, s Store, teamName, name string, active bool) error {
	_, err := edit(ctx, s, teamName, ActiveEdit(name, active))
	return err
}

// RemoveMember removes the member called name. The lead cannot be removed.
func RemoveMember(ctx context.Context, s Store, teamName, name string) error {
	if name == LeadName {
		return fmt.Errorf("remove %s from team %s: the lead cannot be removed; delete the team instead", name, teamName)
	}
	err := mutate(ctx, s, teamName, func(c *Config) error {
		for i, m := range c.Members {
			if m.Name == name {
				c.Members = append(c.Members[:i], c.Members[i+1:]...)
				return nil
			}
		}
		return noMember(c, name)
	})
	return err
}

// Delete removes the team, refusing with an *ActiveError while any member
// other than the lead is active.
func Delete(ctx context.Context, s Store, teamName string) error {
	return s.Delete(ctx, teamName, func(c Config) error {
		var active []string
		for _, m := range c.Members {
			if !m.IsLead() && m.Active() {
				active = append(active, m.Name)
			}
		}
		if len(active) > 0 {
			return &ActiveError{Team: c.Name, Names: active}
		}
		return nil
	})
}

func noMember(c *Config, name string) error {
	return noMemberIn(c.Name, MemberList(c.Members), name)
}
