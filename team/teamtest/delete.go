package teamtest

import (
	"errors"
	"slices"
	"testing"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// seed gives the team an inbox message for each member and a task.
func seed(t *testing.T, s stores, teamName string, members ...string) {
	t.Helper()
	for _, m := range members {
		if _, err := s.mail.Send(t.Context(), teamName, m, mailbox.Message{From: team.LeadName, Text: "hi " + m}); err != nil {
			t.Fatalf("Send to %s error: %v", m, err)
		}
	}
	if _, _, err := s.tasks.Create(t.Context(), teamName, tasklist.Task{Subject: "work", Status: tasklist.StatusPending}); err != nil {
		t.Fatalf("tasks.Create in %s error: %v", teamName, err)
	}
}

func testDeleteRefusedWhileActive(t *testing.T, s stores) {
	ctx := t.Context()
	create(t, s, "crew")
	for _, n := range []string{"alice", "bob", "carol"} {
		add(t, s, "crew", n)
	}
	if err := team.SetActive(ctx, s.teams, "crew", "bob", false); err != nil {
		t.Fatal(err)
	}
	if err := team.SetActive(ctx, s.teams, "crew", "carol", true); err != nil {
		t.Fatal(err)
	}
	seed(t, s, "crew", "alice", team.LeadName)

	err := team.Delete(ctx, s.teams, "crew")
	var ae *team.ActiveError
	if !errors.As(err, &ae) || !errors.Is(err, team.ErrActive) {
		t.Fatalf("Delete with active members error = %v; want a *team.ActiveError", err)
	}
	if ae.Team != "crew" || !slices.Equal(ae.Names, []string{"alice", "carol"}) {
		t.Errorf("ActiveError = {Team %q, Names %q}; want {crew, [alice carol]}", ae.Team, ae.Names)
	}
	get(t, s, "crew")
	if got, err := s.mail.Read(ctx, "crew", "alice", false); err != nil || len(got) != 1 {
		t.Errorf("Read(alice) after a refused Delete = %d messages, %v; want 1, nil", len(got), err)
	}
	if _, _, err := s.tasks.Get(ctx, "crew", "1"); err != nil {
		t.Errorf("task 1 after a refused Delete: %v; want it kept", err)
	}

	// Idle or removed members no longer block.
	if err := team.SetActive(ctx, s.teams, "crew", "alice", false); err != nil {
		t.Fatal(err)
	}
	if err := team.RemoveMember(ctx, s.teams, "crew", "carol"); err != nil {
		t.Fatal(err)
	}
	if err := team.Delete(ctx, s.teams, "crew"); err != nil {
		t.Fatalf("Delete with idle members error: %v", err)
	}
	if _, err := s.teams.Get(ctx, "crew"); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("Get after Delete error = %v; want ErrNotFound", err)
	}
}

func testDeleteRemovesEverything(t *testing.T, s stores) {
	ctx := t.Context()
	create(t, s, "crew")
	create(t, s, "other")
	add(t, s, "crew", "alice")
	add(t, s, "other", "alice")
	if err := team.SetActive(ctx, s.teams, "crew", "alice", false); err != nil {
		t.Fatal(err)
	}
	seed(t, s, "crew", "alice", team.LeadName)
	seed(t, s, "other", "alice")

	if err := team.Delete(ctx, s.teams, "crew"); err != nil {
		t.Fatalf("Delete(crew) error: %v", err)
	}
	if _, err := s.teams.Get(ctx, "crew"); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("Get(crew) after Delete error = %v; want ErrNotFound", err)
	}
	if err := team.Delete(ctx, s.teams, "crew"); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("second Delete(crew) error = %v; want ErrNotFound", err)
	}
	checkGone(t, s, "crew", "alice", team.LeadName)
	if _, err := s.mail.Send(ctx, "crew", "alice", mailbox.Message{From: team.LeadName, Text: "late"}); !errors.Is(err, mailbox.ErrNoTeam) {
		t.Errorf("Send to deleted team error = %v; want ErrNoTeam", err)
	}

	// The other team is untouched.
	if got, err := s.mail.Read(ctx, "other", "alice", false); err != nil || len(got) != 1 {
		t.Errorf("Read(other, alice) = %d messages, %v; want 1, nil", len(got), err)
	}
	if _, _, err := s.tasks.Get(ctx, "other", "1"); err != nil {
		t.Errorf("task 1 of other after deleting crew: %v; want it kept", err)
	}

	// A new team of the same name starts empty.
	create(t, s, "crew")
	add(t, s, "crew", "alice")
	checkGone(t, s, "crew", "alice", team.LeadName)
}

// checkGone fails if teamName still has messages for agents or tasks.
func checkGone(t *testing.T, s stores, teamName string, agents ...string) {
	t.Helper()
	ctx := t.Context()
	for _, a := range agents {
		if got, err := s.mail.Read(ctx, teamName, a, false); err == nil && len(got) != 0 {
			t.Errorf("Read(%s, %s) = %d messages; want none after the team was deleted", teamName, a, len(got))
		}
	}
	if got, err := s.tasks.List(ctx, teamName); err == nil && len(got) != 0 {
		t.Errorf("tasks of %s = %d; want none after the team was deleted", teamName, len(got))
	}
	if _, _, err := s.tasks.Get(ctx, teamName, "1"); err == nil {
		t.Errorf("task 1 of %s still readable after the team was deleted", teamName)
	}
}

// testError is a typed error that must reach the caller intact.
type testError struct{ code int }

func testDeleteCheckError(t *testing.T, s stores) {
	create(t, s, "crew")
	want := &testError{7}
	var seen team.Config
	err := s.teams.Delete(t.Context(), "crew", func(c team.Config) error { seen = c; return want })
	var got *testError
	if !errors.As(err, &got) || got != want || !errors.Is(err, want) {
		t.Errorf("Delete with a refusing check error = %v; want %v as is", err, want)
	}
	if seen.Name != "crew" || len(seen.Members) != 1 {
		t.Errorf("check saw {Name %q, %d members}; want {crew, 1}", seen.Name, len(seen.Members))
	}
	get(t, s, "crew")
}
