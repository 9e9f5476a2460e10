package team_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/team"
)

// roster returns a team of the lead and n teammates t0..t(n-1).
func editRoster(n int) team.Config {
	c := team.Config{Name: "crew", Members: []team.Member{{AgentID: team.LeadID("crew"), Name: team.LeadName}}}
	for i := range n {
		name := fmt.Sprintf("t%d", i)
		c.Members = append(c.Members, team.Member{AgentID: team.AgentID(name, "crew"), Name: name, Color: team.Palette[1+i%(len(team.Palette)-1)]})
	}
	return c
}

// TestEditApply: what each edit does to a roster, decided without
// changing it.
func TestEditApply(t *testing.T) {
	now := time.UnixMilli(1234)
	add := func(name string) team.Edit {
		e, err := team.AddEdit(team.Member{Name: name}, now)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	f := false
	idle := editRoster(2)
	idle.Members[2].IsActive = &f
	tests := []struct {
		name    string
		c       team.Config
		e       team.Edit
		want    team.Change
		wantErr error
	}{
		{"add", editRoster(2), add("new"), team.Change{Index: 3, Member: team.Member{AgentID: "new@crew", Name: "new", Color: "yellow", JoinedAt: 1234, TmuxPaneID: team.PaneInProcess, BackendType: team.BackendInProcess}}, nil},
		{"add again", editRoster(2), add("t1"), team.Change{None: true, Index: 2, Member: editRoster(2).Members[2]}, nil},
		{"add another case", editRoster(2), add("T1"), team.Change{}, team.ErrMemberExists},
		{"active already (no flag)", editRoster(2), team.ActiveEdit("t1", true), team.Change{None: true, Index: 2, Member: editRoster(2).Members[2]}, nil},
		{"idle", editRoster(2), team.ActiveEdit("t1", false), team.Change{Index: 2, Member: idle.Members[2]}, nil},
		{"idle already", idle, team.ActiveEdit("t1", false), team.Change{None: true, Index: 2, Member: idle.Members[2]}, nil},
		{"no such member", editRoster(2), team.ActiveEdit("ghost", false), team.Change{}, team.ErrNoMember},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := fmt.Sprint(tt.c.Members)
			got, err := tt.e.Apply(tt.c.Name, team.MemberList(tt.c.Members))
			if after := fmt.Sprint(tt.c.Members); after != before {
				t.Errorf("Apply changed the roster: %s; was %s", after, before)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Apply(%v) error = %v; want %v", tt.e, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply(%v): %v", tt.e, err)
			}
			if g, w := fmt.Sprintf("%v %d %+v", got.None, got.Index, memberString(got.Member)), fmt.Sprintf("%v %d %+v", tt.want.None, tt.want.Index, memberString(tt.want.Member)); g != w {
				t.Errorf("Apply(%v) = %s; want %s", tt.e, g, w)
			}
		})
	}
}

func memberString(m team.Member) string {
	a := "nil"
	if m.IsActive != nil {
		a = fmt.Sprint(*m.IsActive)
	}
	m.IsActive = nil
	return fmt.Sprintf("%+v active=%s", m, a)
}

// TestEditSharedInbox: a name that shares a member's inbox file is refused.
func TestEditSharedInbox(t *testing.T) {
	c := editRoster(0)
	c.Members = append(c.Members, team.Member{AgentID: "a.b@crew", Name: "a.b"})
	e, err := team.AddEdit(team.Member{Name: "A-b"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Apply("crew", team.MemberList(c.Members)); !errors.Is(err, team.ErrMemberExists) || !strings.Contains(err.Error(), "inbox file") {
		t.Errorf("Apply(add A-b) next to a.b = %v; want ErrMemberExists naming the inbox file", err)
	}
}

// TestEditApplyTo: ApplyTo stores the change in the config; the member it
// returns shares nothing with the stored one.
func TestEditApplyTo(t *testing.T) {
	c := editRoster(1)
	e, err := team.AddEdit(team.Member{Name: "new", Subscriptions: []string{"x"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.ApplyTo(&c)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Members) != 3 || c.Members[2].Name != "new" {
		t.Fatalf("roster after ApplyTo(add new) = %v", c.Names())
	}
	m.Subscriptions[0] = "changed"
	if c.Members[2].Subscriptions[0] != "x" {
		t.Errorf("the returned member aliases the stored one")
	}
	if _, err := team.ActiveEdit("new", false).ApplyTo(&c); err != nil || c.Members[2].Active() {
		t.Errorf("ApplyTo(idle new) = %v, active %v; want nil, false", err, c.Members[2].Active())
	}
}

// TestAddEditRefuses: a bad member is refused before any store sees it.
func TestAddEditRefuses(t *testing.T) {
	for _, m := range []team.Member{{Name: ""}, {Name: "a/b"}, {Name: team.LeadName}, {Name: "ok", Cwd: "\xff"}} {
		if _, err := team.AddEdit(m, time.Now()); err == nil {
			t.Errorf("AddEdit(%q, cwd %q) = nil error; want one", m.Name, m.Cwd)
		}
	}
}

// TestEditApplyAllocs: deciding an edit in a roster of a thousand does
// not allocate per member (it ran for every spawn).
func TestEditApplyAllocs(t *testing.T) {
	c := editRoster(1000)
	add, err := team.AddEdit(team.Member{Name: "new"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ms := team.MemberList(c.Members)
	for _, e := range []team.Edit{add, team.ActiveEdit("t999", false)} {
		if n := testing.AllocsPerRun(20, func() { e.Apply("crew", ms) }); n > 10 {
			t.Errorf("Apply(%v) in a roster of 1,000: %.0f allocations; want at most 10", e, n)
		}
	}
}

// TestSameInboxAllocs: SameInbox builds no strings.
func TestSameInboxAllocs(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { team.SameInbox("some.Name-x", "some-name-X") }); n != 0 {
		t.Errorf("SameInbox allocates %.0f times; want 0", n)
	}
}

// FuzzSameInbox: SameInbox agrees with comparing the inbox file names.
func FuzzSameInbox(f *testing.F) {
	for _, p := range [][2]string{{"a", "A"}, {"a.b", "a-b"}, {"a", "ab"}, {"é", "-"}, {"é", "--"}, {"\xff", "-"}, {"", ""}, {"x_y", "X_Y"}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		want := strings.EqualFold(team.SanitizePath(a), team.SanitizePath(b))
		if got := team.SameInbox(a, b); got != want {
			t.Fatalf("SameInbox(%q, %q) = %v; want %v (inbox names %q, %q)", a, b, got, want, team.InboxName(a), team.InboxName(b))
		}
	})
}
