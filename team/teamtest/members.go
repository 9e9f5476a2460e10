package teamtest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/team"
)

func testAddMember(t *testing.T, s stores) {
	create(t, s, "crew")
	in := team.Member{Name: "alice", Model: "sonnet", Prompt: "do it", Cwd: "/w", AgentType: "tester"}
	got, err := team.AddMember(t.Context(), s.teams, "crew", in, now)
	if err != nil {
		t.Fatalf("AddMember(alice) error: %v", err)
	}
	want := in
	want.AgentID, want.Color, want.JoinedAt = "alice@crew", "blue", now.UnixMilli()
	want.BackendType, want.TmuxPaneID = team.BackendInProcess, team.PaneInProcess
	if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
		t.Errorf("AddMember(alice) mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, member(t, s, "crew", "alice"), equateEmpty); diff != "" {
		t.Errorf("stored alice mismatch (-want +got):\n%s", diff)
	}

	// A retried spawn is idempotent: same member back, roster unchanged.
	again, err := team.AddMember(t.Context(), s.teams, "crew", team.Member{Name: "alice", Model: "other"}, now.Add(time.Hour))
	if err != nil {
		t.Fatalf("second AddMember(alice) error: %v", err)
	}
	if diff := cmp.Diff(want, again, equateEmpty); diff != "" {
		t.Errorf("second AddMember(alice) mismatch (-want +got):\n%s", diff)
	}
	if names := roster(t, s, "crew"); !slices.Equal(names, []string{team.LeadName, "alice"}) {
		t.Errorf("roster after a repeated AddMember = %q; want [team-lead alice]", names)
	}
	tmux := add(t, s, "crew", "bob")
	if tmux.AgentID != "bob@crew" || tmux.Color != "green" {
		t.Errorf("AddMember(bob) = {AgentID %q, Color %q}; want {bob@crew, green}", tmux.AgentID, tmux.Color)
	}
}

func testAddMemberRefused(t *testing.T, s stores) {
	create(t, s, "crew")
	add(t, s, "crew", "alice")
	tests := []struct {
		name string
		want error
	}{
		{"Alice", team.ErrMemberExists},
		{"ALICE", team.ErrMemberExists},
		{team.LeadName, team.ErrInvalidName},
		{"Team-Lead", team.ErrInvalidName},
		{"main", team.ErrInvalidName},
		{"USER", team.ErrInvalidName},
		{"system", team.ErrInvalidName},
		{"fe1abf51-0000-4000-8000-000000000000", team.ErrInvalidName},
		{"a@crew", team.ErrInvalidName},
		{"", team.ErrInvalidName},
		{"-dash", team.ErrInvalidName},
		{"has space", team.ErrInvalidName},
		{strings.Repeat("n", 65), team.ErrInvalidName},
	}
	for _, tt := range tests {
		_, err := team.AddMember(t.Context(), s.teams, "crew", team.Member{Name: tt.name}, now)
		if !errors.Is(err, tt.want) {
			t.Errorf("AddMember(%q) error = %v; want %v", tt.name, err, tt.want)
		}
	}
	if names := roster(t, s, "crew"); !slices.Equal(names, []string{team.LeadName, "alice"}) {
		t.Errorf("roster after refused adds = %q; want [team-lead alice]", names)
	}
}

func testColors(t *testing.T, s stores) {
	create(t, s, "crew")
	var got []string
	for i := range len(team.Palette) {
		got = append(got, add(t, s, "crew", fmt.Sprint("m", i)).Color)
	}
	want := team.Palette[1:]
	if diff := cmp.Diff(want, got[:len(want)]); diff != "" {
		t.Errorf("colors of the first %d members mismatch (-want +got):\n%s", len(want), diff)
	}
	if last := got[len(got)-1]; !slices.Contains(team.Palette[:], last) {
		t.Errorf("color once the palette is exhausted = %q; want a palette color", last)
	}
	// A freed color is reused before any repeat.
	if err := team.RemoveMember(t.Context(), s.teams, "crew", "m2"); err != nil { // yellow
		t.Fatal(err)
	}
	c := get(t, s, "crew")
	if next := c.NextColor(); next != "yellow" {
		t.Errorf("NextColor after removing the yellow member = %q; want yellow", next)
	}
}

func testUpdateMember(t *testing.T, s stores) {
	ctx := t.Context()
	create(t, s, "crew")
	add(t, s, "crew", "alice")
	got, err := team.UpdateMember(ctx, s.teams, "crew", "alice", func(m *team.Member) error {
		m.Model, m.Mode, m.TmuxPaneID, m.BackendType = "haiku", "plan", "%12", team.BackendTmux
		return nil
	})
	if err != nil {
		t.Fatalf("UpdateMember(alice) error: %v", err)
	}
	for _, m := range []team.Member{got, member(t, s, "crew", "alice")} {
		if m.Model != "haiku" || m.Mode != "plan" || m.TmuxPaneID != "%12" || m.BackendType != team.BackendTmux {
			t.Errorf("alice after UpdateMember = {Model %q, Mode %q, Pane %q, Backend %q}; want {haiku, plan, %%12, tmux}", m.Model, m.Mode, m.TmuxPaneID, m.BackendType)
		}
	}
	if _, err := team.UpdateMember(ctx, s.teams, "crew", "zed", func(*team.Member) error { return nil }); !errors.Is(err, team.ErrNoMember) {
		t.Errorf("UpdateMember(zed) error = %v; want ErrNoMember", err)
	}
	before := get(t, s, "crew")
	if _, err := team.UpdateMember(ctx, s.teams, "crew", "alice", func(m *team.Member) error { m.Name = "mallory"; return nil }); err == nil {
		t.Errorf("UpdateMember renaming alice succeeded; want an error")
	}
	errStop := errors.New("stop")
	if _, err := team.UpdateMember(ctx, s.teams, "crew", "alice", func(m *team.Member) error { m.Model = "x"; return errStop }); !errors.Is(err, errStop) {
		t.Errorf("UpdateMember with a failing fn error = %v; want %v", err, errStop)
	}
	if diff := cmp.Diff(before, get(t, s, "crew"), equateEmpty); diff != "" {
		t.Errorf("refused member updates changed the team (-before +after):\n%s", diff)
	}
}

func testSetActive(t *testing.T, s stores) {
	create(t, s, "crew")
	if m := add(t, s, "crew", "alice"); !m.Active() {
		t.Errorf("new member Active() = false; want true (absent isActive counts as active)")
	}
	// Marking it active writes nothing: it counts as active already.
	if err := team.SetActive(t.Context(), s.teams, "crew", "alice", true); err != nil {
		t.Fatalf("SetActive(alice, true) error: %v", err)
	}
	if m := member(t, s, "crew", "alice"); m.IsActive != nil {
		t.Errorf("after SetActive(alice, true) on a member without the flag, isActive = %v; want it still absent", *m.IsActive)
	}
	for _, active := range []bool{false, true, false} {
		if err := team.SetActive(t.Context(), s.teams, "crew", "alice", active); err != nil {
			t.Fatalf("SetActive(alice, %v) error: %v", active, err)
		}
		m := member(t, s, "crew", "alice")
		if m.IsActive == nil || *m.IsActive != active {
			t.Errorf("after SetActive(alice, %v), isActive = %v; want %v", active, m.IsActive, active)
		}
	}
	if err := team.SetActive(t.Context(), s.teams, "crew", "zed", true); !errors.Is(err, team.ErrNoMember) {
		t.Errorf("SetActive(zed) error = %v; want ErrNoMember", err)
	}
}

func testRemoveMember(t *testing.T, s stores) {
	ctx := t.Context()
	create(t, s, "crew")
	add(t, s, "crew", "alice")
	add(t, s, "crew", "bob")
	if err := team.RemoveMember(ctx, s.teams, "crew", "alice"); err != nil {
		t.Fatalf("RemoveMember(alice) error: %v", err)
	}
	if err := team.RemoveMember(ctx, s.teams, "crew", "alice"); !errors.Is(err, team.ErrNoMember) {
		t.Errorf("second RemoveMember(alice) error = %v; want ErrNoMember", err)
	}
	if err := team.RemoveMember(ctx, s.teams, "crew", team.LeadName); err == nil {
		t.Errorf("RemoveMember(team-lead) succeeded; want an error")
	}
	if names := roster(t, s, "crew"); !slices.Equal(names, []string{team.LeadName, "bob"}) {
		t.Errorf("roster = %q; want [team-lead bob]", names)
	}
}

// testConcurrentAddMember adds Goroutines members at once.
func testConcurrentAddMember(t *testing.T, s stores) {
	create(t, s, "crew")
	var wg sync.WaitGroup
	for i := range Goroutines {
		wg.Go(func() {
			if _, err := team.AddMember(t.Context(), s.teams, "crew", team.Member{Name: fmt.Sprintf("w%02d", i)}, now); err != nil {
				t.Errorf("AddMember(w%02d) error: %v", i, err)
			}
		})
	}
	wg.Wait()
	c := get(t, s, "crew")
	var names []string
	for _, m := range c.Members[1:] {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	var want []string
	for i := range Goroutines {
		want = append(want, fmt.Sprintf("w%02d", i))
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("roster after %d concurrent adds mismatch (-want +got):\n%s", Goroutines, diff)
	}
	first := len(team.Palette) - 1
	seen := map[string]string{}
	for _, m := range c.Members[1 : 1+first] {
		if prev, dup := seen[m.Color]; dup {
			t.Errorf("members %s and %s both got color %q among the first %d", prev, m.Name, m.Color, first)
		}
		seen[m.Color] = m.Name
		if m.Color == team.Palette[0] {
			t.Errorf("member %s got the lead's color %q", m.Name, m.Color)
		}
	}
	for _, m := range c.Members[1:] {
		if !slices.Contains(team.Palette[:], m.Color) {
			t.Errorf("member %s color = %q; want a palette color", m.Name, m.Color)
		}
	}
}

// testAddMemberSharedInbox refuses a member whose inbox file would be that
// of a member already on the roster: a name another program stored that
// sanitizes to the same file name, or differs only in case.
func testAddMemberSharedInbox(t *testing.T, s stores) {
	ctx := t.Context()
	create(t, s, "crew")
	// Written by another program: not a name troupe would accept.
	if _, err := s.teams.Update(ctx, "crew", func(c *team.Config) error {
		c.Members = append(c.Members, team.Member{Name: "a.b", AgentID: "a.b@crew"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a-b", "A-B", "a_b"} {
		_, err := team.AddMember(ctx, s.teams, "crew", team.Member{Name: name}, time.Now())
		shared := name != "a_b"
		if refused := errors.Is(err, team.ErrMemberExists); refused != shared {
			t.Errorf("AddMember(%s) with a.b on the roster = %v; want refused %v", name, err, shared)
		}
		if shared && (err == nil || !strings.Contains(err.Error(), "a-b.json")) {
			t.Errorf("AddMember(%s) error = %v; want it to name the shared inbox file a-b.json", name, err)
		}
	}
	c, err := s.teams.Get(ctx, "crew")
	if err != nil {
		t.Fatal(err)
	}
	problems := c.CheckMembers()
	for i, m := range c.Members {
		if invalid := problems[i] != nil; invalid != (m.Name == "a.b") {
			t.Errorf("CheckMembers: %s invalid = %v (%v); want only a.b invalid", m.Name, invalid, problems[i])
		}
	}
}
