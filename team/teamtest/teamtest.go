// Package teamtest is the conformance suite for team.Store implementations,
// run through the team package's functions (Create, AddMember,
// UpdateMember, SetActive, RemoveMember, Delete): naming, roster rules,
// colors, unknown keys, concurrency, and a Delete that removes the team's
// mailboxes and task list too.
//
// An implementation's test calls Run with a function that opens fresh
// stores sharing one backend:
//
//	func TestConformance(t *testing.T) {
//		teamtest.Run(t, func(t *testing.T) (team.Store, mailbox.Store, tasklist.Store) {
//			s := mem.New(mem.Options{})
//			t.Cleanup(func() { s.Close() })
//			return s.Teams(), s.Mail(), s.Tasks()
//		})
//	}
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
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// Goroutines is the concurrency of the AddMember race.
const Goroutines = 16

// stores are the three views of one backend under test.
type stores struct {
	teams team.Store
	mail  mailbox.Store
	tasks tasklist.Store
}

// Run runs the suite. open must return stores sharing one fresh, empty
// backend for each call; it runs once per subtest.
func Run(t *testing.T, open func(t *testing.T) (team.Store, mailbox.Store, tasklist.Store)) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s stores)
	}{
		{"Create", testCreate},
		{"CreateTakenName", testCreateTakenName},
		{"CreateInvalidName", testCreateInvalidName},
		{"StoreErrors", testStoreErrors},
		{"AddMember", testAddMember},
		{"AddMemberRefused", testAddMemberRefused},
		{"AddMemberSharedInbox", testAddMemberSharedInbox},
		{"Colors", testColors},
		{"UpdateMember", testUpdateMember},
		{"HelpersNoAliasing", testHelpersNoAliasing},
		{"SetActive", testSetActive},
		{"RemoveMember", testRemoveMember},
		{"DeleteRefusedWhileActive", testDeleteRefusedWhileActive},
		{"DeleteRemovesEverything", testDeleteRemovesEverything},
		{"DeleteCheckError", testDeleteCheckError},
		{"UpdateFnError", testUpdateFnError},
		{"List", testList},
		{"ExtraKeysSurvive", testExtraKeysSurvive},
		{"NoAliasing", testNoAliasing},
		{"ConcurrentAddMember", testConcurrentAddMember},
		{"ConcurrentUpdate", testConcurrentUpdate},
		{"Watch", testWatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts, ms, ls := open(t)
			tt.fn(t, stores{ts, ms, ls})
		})
	}
}

var now = time.Date(2026, 12, 2, 13, 13, 36, 880_000_000, time.UTC)

// picker returns a Pick function that never repeats a word pair soon.
func picker() func(int) int {
	var mu sync.Mutex
	i := 0
	return func(n int) int {
		mu.Lock()
		defer mu.Unlock()
		i++
		return i % n
	}
}

func create(t *testing.T, s stores, name string) team.Config {
	t.Helper()
	c, err := team.Create(t.Context(), s.teams, team.CreateOptions{Name: name, Now: now, Pick: picker()})
	if err != nil {
		t.Fatalf("team.Create(%q) error: %v", name, err)
	}
	return c
}

func add(t *testing.T, s stores, teamName, name string) team.Member {
	t.Helper()
	m, err := team.AddMember(t.Context(), s.teams, teamName, team.Member{Name: name}, now)
	if err != nil {
		t.Fatalf("team.AddMember(%q, %q) error: %v", teamName, name, err)
	}
	return m
}

func get(t *testing.T, s stores, name string) team.Config {
	t.Helper()
	c, err := s.teams.Get(t.Context(), name)
	if err != nil {
		t.Fatalf("Get(%q) error: %v", name, err)
	}
	return c
}

// roster returns the member names of teamName in roster order.
func roster(t *testing.T, s stores, teamName string) []string {
	t.Helper()
	c := get(t, s, teamName)
	return c.Names()
}

// member returns the member called name of teamName.
func member(t *testing.T, s stores, teamName, name string) team.Member {
	t.Helper()
	c := get(t, s, teamName)
	m, ok := c.Member(name)
	if !ok {
		t.Fatalf("%s not on the roster of %s (%q)", name, teamName, c.Names())
	}
	return *m
}

var equateEmpty = cmpopts.EquateEmpty()

func testCreate(t *testing.T, s stores) {
	c, err := team.Create(t.Context(), s.teams, team.CreateOptions{
		Name: "My Team", Description: "ships things", SessionID: "fe1abf51-0000-4000-8000-000000000000",
		LeadType: "team-lead", LeadModel: "opus", Cwd: "/work", Now: now, Pick: picker(),
	})
	if err != nil {
		t.Fatalf("team.Create(\"My Team\") error: %v", err)
	}
	want := team.Config{
		Name: "my-team", Description: "ships things", CreatedAt: now.UnixMilli(),
		LeadAgentID: "team-lead@my-team", LeadSessionID: "fe1abf51-0000-4000-8000-000000000000",
		Members: []team.Member{{
			AgentID: "team-lead@my-team", Name: team.LeadName, AgentType: "team-lead", Model: "opus",
			JoinedAt: now.UnixMilli(), TmuxPaneID: team.PaneLeader, Cwd: "/work", BackendType: team.BackendInProcess,
		}},
	}
	if diff := cmp.Diff(want, c, equateEmpty); diff != "" {
		t.Errorf("team.Create result mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, get(t, s, "my-team"), equateEmpty); diff != "" {
		t.Errorf("Get after Create mismatch (-want +got):\n%s", diff)
	}
}

func testCreateTakenName(t *testing.T, s stores) {
	first := create(t, s, "alpha")
	second := create(t, s, "Alpha") // same canonical name
	third := create(t, s, "alpha")
	names := []string{first.Name, second.Name, third.Name}
	if first.Name != "alpha" {
		t.Errorf("first Create name = %q; want \"alpha\"", first.Name)
	}
	for _, c := range []team.Config{second, third} {
		if !strings.HasPrefix(c.Name, "alpha-") || team.ValidateTeamName(c.Name) != nil || team.Sanitize(c.Name) != c.Name {
			t.Errorf("repeated Create name = %q; want a canonical \"alpha-<words>\"", c.Name)
		}
		if c.LeadAgentID != team.LeadID(c.Name) || c.Members[0].AgentID != team.LeadID(c.Name) {
			t.Errorf("team %q lead ids = %q, %q; want %q", c.Name, c.LeadAgentID, c.Members[0].AgentID, team.LeadID(c.Name))
		}
	}
	if uniq := slices.Compact(slices.Sorted(slices.Values(names))); len(uniq) != 3 {
		t.Errorf("three creates of alpha gave names %q; want three different names", names)
	}
	for _, n := range names {
		get(t, s, n)
	}
}

func testCreateInvalidName(t *testing.T, s stores) {
	tests := []string{"", "../x", "a/b", `a\b`, "x\x00", strings.Repeat("a", 65), "/abs", "..", "tab\tname", "---", "ünïcode"}
	for _, name := range tests {
		_, err := team.Create(t.Context(), s.teams, team.CreateOptions{Name: name, Now: now, Pick: picker()})
		if !errors.Is(err, team.ErrInvalidName) {
			t.Errorf("team.Create(%q) error = %v; want ErrInvalidName", name, err)
		}
	}
	if got, err := s.teams.List(t.Context()); err != nil || len(got) != 0 {
		t.Errorf("List after refused creates = %d teams, %v; want 0, nil", len(got), err)
	}
}

func testStoreErrors(t *testing.T, s stores) {
	ctx := t.Context()
	c := create(t, s, "alpha")
	if err := s.teams.Create(ctx, c); !errors.Is(err, team.ErrExists) {
		t.Errorf("Store.Create of an existing team error = %v; want ErrExists", err)
	}
	if _, err := s.teams.Get(ctx, "ghost"); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("Get(ghost) error = %v; want ErrNotFound", err)
	}
	called := false
	if _, err := s.teams.Update(ctx, "ghost", func(*team.Config) error { called = true; return nil }); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("Update(ghost) error = %v; want ErrNotFound", err)
	}
	if err := s.teams.Delete(ctx, "ghost", func(team.Config) error { called = true; return nil }); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("Delete(ghost) error = %v; want ErrNotFound", err)
	}
	if called {
		t.Errorf("Update or Delete of a missing team called its function")
	}
	if _, err := team.AddMember(ctx, s.teams, "ghost", team.Member{Name: "alice"}, now); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("AddMember to ghost error = %v; want ErrNotFound", err)
	}
}

func (e *testError) Error() string { return fmt.Sprint("test error ", e.code) }

func testList(t *testing.T, s stores) {
	for _, n := range []string{"zeta", "Alpha", "mid team"} {
		create(t, s, n)
	}
	got, err := s.teams.List(t.Context())
	if err != nil {
		t.Fatalf("List error: %v", err)
	}
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"alpha", "mid-team", "zeta"}, names); diff != "" {
		t.Errorf("List names mismatch (-want +got):\n%s", diff)
	}
}
