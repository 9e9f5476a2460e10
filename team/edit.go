package team

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Edit is one change to a team's roster: a member added (AddEdit) or a
// member's active flag set (ActiveEdit). A store that keeps its own copy
// of a team applies an edit to that copy (Editor) instead of handing a
// copy of the whole team to a function, and encodes only the member that
// changed: in a team of a thousand, copying and re-encoding the roster for
// every spawn made spawning quadratic. Apply decides what an edit does, the
// same for every store.
type Edit struct {
	kind   editKind
	member Member    // editAdd: the member to add, checked and cloned
	now    time.Time // editAdd: its JoinedAt when zero
	name   string    // editActive: the member
	active bool      // editActive: the flag wanted
}

type editKind uint8

const (
	editAdd editKind = iota + 1
	editActive
)

// AddEdit returns the edit that adds m, as AddMember does: it fills
// AgentID, Color (when empty), JoinedAt (when zero, from now), BackendType
// (in-process when empty) and the in-process pane id. It refuses a name
// that fails ValidateAgentName and text that is not valid UTF-8.
func AddEdit(m Member, now time.Time) (Edit, error) {
	if err := ValidateAgentName(m.Name, false); err != nil {
		return Edit{}, err
	}
	if err := m.CheckText(); err != nil {
		return Edit{}, fmt.Errorf("add %s: %w", m.Name, err)
	}
	// The stored member shares nothing with the caller's.
	return Edit{kind: editAdd, member: m.Clone(), now: now}, nil
}

// ActiveEdit returns the edit that marks member name active (working) or
// idle. A member already so marked is left as it is; one without the flag
// counts as active (Member.Active).
func ActiveEdit(name string, active bool) Edit {
	return Edit{kind: editActive, name: name, active: active}
}

// String describes e for errors and logs.
func (e Edit) String() string {
	switch e.kind {
	case editAdd:
		return "add " + e.member.Name
	case editActive:
		return fmt.Sprintf("mark %s active=%v", e.name, e.active)
	}
	return "empty edit"
}

// Members is read-only access to a roster, in order. Apply never modifies
// what At returns.
type Members interface {
	Len() int
	At(i int) *Member
}

// MemberList is a roster held as a slice (Config.Members).
type MemberList []Member

// Len returns the number of members.
func (l MemberList) Len() int { return len(l) }

// At returns the i-th member.
func (l MemberList) At(i int) *Member { return &l[i] }

// Change is what an edit does to a roster.
type Change struct {
	// None says the roster is already as the edit asks: nothing to write.
	None bool
	// Index is the member to replace, or the roster's length to append.
	Index int
	// Member is the member as stored after the edit: the new value at
	// Index, or (None) the member already on the roster, shared with the
	// roster: copy it (Clone) before handing it out.
	Member Member
}

// Apply decides what e does to the roster ms of team teamName. It is pure
// and modifies nothing: the caller stores the change. An add whose agent
// id is on the roster under the same name changes nothing (a retried spawn
// is idempotent); any other name clash, case-insensitive or through a
// shared inbox file, gives ErrMemberExists. A flag for a member not on the
// roster gives ErrNoMember.
func (e Edit) Apply(teamName string, ms Members) (Change, error) {
	switch e.kind {
	case editAdd:
		return e.applyAdd(teamName, ms)
	case editActive:
		for i := range ms.Len() {
			m := ms.At(i)
			if m.Name != e.name {
				continue
			}
			if m.Active() == e.active {
				return Change{None: true, Index: i, Member: *m}, nil
			}
			out := *m // shallow: only the flag changes, and it gets its own
			active := e.active
			out.IsActive = &active
			return Change{Index: i, Member: out}, nil
		}
		return Change{}, noMemberIn(teamName, ms, e.name)
	}
	return Change{}, errors.New("team: apply an empty edit")
}

func (e Edit) applyAdd(teamName string, ms Members) (Change, error) {
	m := e.member
	id := AgentID(m.Name, teamName)
	n := ms.Len()
	for i := range n {
		old := ms.At(i)
		if old.AgentID == id && old.Name == m.Name {
			return Change{None: true, Index: i, Member: *old}, nil
		}
		if strings.EqualFold(old.Name, m.Name) {
			return Change{}, fmt.Errorf("add %s to team %s: %w (as %q)", m.Name, teamName, ErrMemberExists, old.Name)
		}
		if SameInbox(old.Name, m.Name) {
			return Change{}, fmt.Errorf("add %s to team %s: %w: %q already uses inbox file %s", m.Name, teamName, ErrMemberExists, old.Name, InboxName(old.Name))
		}
	}
	// e.member is shared by every Apply of e (a store may apply an edit
	// again after a conflict); the stored copy gets its own slices.
	m = m.Clone()
	m.AgentID = id
	if m.Color == "" {
		m.Color = nextColor(ms)
	}
	if m.JoinedAt == 0 {
		m.JoinedAt = e.now.UnixMilli()
	}
	if m.BackendType == "" {
		m.BackendType = BackendInProcess
	}
	if m.TmuxPaneID == "" && m.BackendType == BackendInProcess {
		m.TmuxPaneID = PaneInProcess
	}
	return Change{Index: n, Member: m}, nil
}

// ApplyTo applies e to c and returns the member as stored (a copy the
// caller owns). When the roster is already as e asks it returns the
// member and errUnchanged, which the helpers of this package turn into
// success without a write.
func (e Edit) ApplyTo(c *Config) (Member, error) {
	ch, err := e.Apply(c.Name, MemberList(c.Members))
	switch {
	case err != nil:
		return Member{}, err
	case ch.None:
		return ch.Member.Clone(), errUnchanged
	case ch.Index == len(c.Members):
		c.Members = append(c.Members, ch.Member)
	default:
		c.Members[ch.Index] = ch.Member
	}
	return ch.Member.Clone(), nil
}

// Editor is implemented by stores that apply an Edit to their own copy of
// a team (see Edit). Edit stores the change and returns the member as
// stored, a copy the caller owns; a roster already as e asks is not
// written. It returns e's errors as they are (ErrMemberExists,
// ErrNoMember), ErrNotFound for a missing team, and ctx's error for an
// edit whose ctx ended before it was written (the edit is then dropped).
// AddMember and SetActive use it when the store has it.
type Editor interface {
	Edit(ctx context.Context, teamName string, e Edit) (Member, error)
}

// edit applies e to team name through s's Edit, or its Mutate or Update.
func edit(ctx context.Context, s Store, name string, e Edit) (Member, error) {
	if ed, ok := s.(Editor); ok {
		return ed.Edit(ctx, name, e)
	}
	var out Member
	err := mutate(ctx, s, name, func(c *Config) error {
		var err error
		out, err = e.ApplyTo(c)
		return err
	})
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	return out, err
}

// nextColor is Config.NextColor over ms, without allocating.
func nextColor(ms Members) string {
	var used [len(Palette)]int
	used[0] = 1 // the lead's, held in memory though not on disk
	for i := range ms.Len() {
		if c := ms.At(i).Color; c != "" {
			for j, p := range Palette {
				if p == c {
					used[j]++
					break
				}
			}
		}
	}
	best, bestN := "", int(^uint(0)>>1)
	for i := range Palette {
		j := (i + 1) % len(Palette)
		if used[j] < bestN {
			best, bestN = Palette[j], used[j]
		}
	}
	return best
}

// noMemberIn is the error for a member not on roster ms of team teamName.
func noMemberIn(teamName string, ms Members, name string) error {
	names := make([]string, ms.Len())
	for i := range names {
		names[i] = ms.At(i).Name
	}
	return fmt.Errorf("team %s has no member %q (members: %v): %w", teamName, name, names, ErrNoMember)
}
