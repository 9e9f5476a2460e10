package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/cli/teamcmd"
	"github.com/troupe-dev/troupe/team"
)

func TestTeamCommands(t *testing.T) {
	forEachStore(t, func(t *testing.T, h *harness) {
		if out := h.ok("team", "list"); !strings.HasPrefix(out, "no teams") {
			t.Errorf("team list on an empty home printed %q; want no teams", out)
		}
		var created team.Config
		h.json(&created, "team", "create", "My Team", "-d", "builds things")
		if created.Name != "my-team" || created.LeadAgentID != "team-lead@my-team" || created.Description != "builds things" {
			t.Errorf("team create \"My Team\" = name %q lead %q description %q; want my-team, team-lead@my-team, builds things",
				created.Name, created.LeadAgentID, created.Description)
		}
		if err := h.fail("team", "create", "my-team"); !strings.Contains(err.Error(), "already exists") {
			t.Errorf("team create of an existing team: %v; want already exists", err)
		}

		src := t.TempDir() // --cwd must be an existing folder
		out := h.ok("team", "add", "My Team", "alice", "--model", "opus", "--agent-type", "general-purpose", "--cwd", src)
		if !strings.Contains(out, "alice@my-team") {
			t.Errorf("team add printed %q; want the agent id", out)
		}
		// Adding an existing member: refused without changes, an update with them.
		if err := h.fail("team", "add", "my-team", "alice"); !strings.Contains(err.Error(), "alice is already a member of team my-team (alice@my-team") {
			t.Errorf("team add of an existing member: %v", err)
		}
		if out := h.ok("team", "add", "my-team", "alice", "--model", "sonnet"); out != "updated alice@my-team in team my-team: model sonnet\n" {
			t.Errorf("team add of an existing member with --model printed %q", out)
		}
		if out := h.ok("team", "add", "my-team", "alice", "--model", "opus"); !strings.HasPrefix(out, "updated") {
			t.Errorf("team add back to opus printed %q", out)
		}
		var bob team.Member
		h.json(&bob, "team", "add", "my-team", "bob", "--color", "green")
		if bob.AgentID != "bob@my-team" || bob.Color != "green" || bob.Active() {
			t.Errorf("team add bob = %+v; want agent id bob@my-team, color green, idle", bob)
		}

		var shown team.Config
		h.json(&shown, "team", "show", "my-team")
		if got, want := shown.Names(), []string{team.LeadName, "alice", "bob"}; !cmp.Equal(got, want) {
			t.Errorf("team show members = %v; want %v", got, want)
		}
		alice, _ := shown.Member("alice")
		if alice.Model != "opus" || alice.AgentType != "general-purpose" || alice.Cwd != src || alice.Color == "" {
			t.Errorf("alice = %+v; want model opus, type general-purpose, cwd %s, a color", *alice, src)
		}
		out = h.ok("team", "show", "my-team")
		for _, want := range []string{"my-team", "builds things", "alice@my-team", "opus", "green", src} {
			if !strings.Contains(out, want) {
				t.Errorf("team show output lacks %q:\n%s", want, out)
			}
		}

		h.ok("team", "create", "beta")
		var list []team.Config
		h.json(&list, "team", "list")
		if len(list) != 2 || list[0].Name != "beta" || list[1].Name != "my-team" {
			t.Errorf("team list --json = %d teams %v; want beta, my-team", len(list), list)
		}
		out = h.ok("team", "list")
		if !strings.Contains(out, "NAME") || !strings.Contains(out, "my-team") || !strings.Contains(out, "builds things") {
			t.Errorf("team list output:\n%s\nwant a header, my-team and its description", out)
		}

		h.ok("team", "remove", "my-team", "alice")
		h.json(&shown, "team", "show", "my-team")
		if got, want := shown.Names(), []string{team.LeadName, "bob"}; !cmp.Equal(got, want) {
			t.Errorf("after team remove, members = %v; want %v", got, want)
		}
		if err := h.fail("team", "remove", "my-team", team.LeadName); !strings.Contains(err.Error(), "lead") {
			t.Errorf("team remove of the lead: %v; want a refusal naming the lead", err)
		}

		var del teamcmd.Deleted
		h.json(&del, "team", "delete", "my-team")
		if !del.Deleted || del.Team != "my-team" {
			t.Errorf("team delete --json = %+v; want team my-team deleted", del)
		}
		if err := h.fail("team", "show", "my-team"); !strings.Contains(err.Error(), `unknown team "my-team"`) || !strings.Contains(err.Error(), "beta") {
			t.Errorf("team show of a deleted team: %v; want unknown team listing beta", err)
		}
	})
}

func TestTeamDeleteActive(t *testing.T) {
	forEachStore(t, func(t *testing.T, h *harness) {
		h.roster()
		s, err := h.openStore(h.home)
		if err != nil {
			t.Fatal(err)
		}
		if err := team.SetActive(t.Context(), s.Teams, "alpha", "alice", true); err != nil {
			t.Fatal(err)
		}
		if s.Close != nil {
			s.Close()
		}
		err = h.fail("team", "delete", "alpha")
		if !strings.Contains(err.Error(), "alice") || !strings.Contains(err.Error(), "--force") {
			t.Errorf("team delete with an active member: %v; want the member named and --force suggested", err)
		}
		h.ok("team", "show", "alpha") // nothing was deleted
		h.ok("team", "delete", "alpha", "--force")
		h.fail("team", "show", "alpha")
	})
}

func TestHome(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  string
		want string // relative to the fake user home "/u"
	}{
		{"default", nil, "", "/u/.troupe"},
		{"env", nil, "/srv/troupe", "/srv/troupe"},
		{"env with tilde", nil, "~/t", "/u/t"},
		{"flag beats env", []string{"--home", "/x"}, "/srv/troupe", "/x"},
		{"flag with tilde", []string{"--home=~/.claude"}, "", "/u/.claude"},
		{"bare tilde", []string{"--home", "~"}, "", "/u"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			m := &Main{
				Stdout:  &strings.Builder{},
				Stderr:  &strings.Builder{},
				Getenv:  func(k string) string { return map[string]string{"TROUPE_HOME": tt.env}[k] },
				HomeDir: func() (string, error) { return "/u", nil },
				OpenStore: func(home string) (Stores, error) {
					got = home
					return Stores{}, errStop
				},
			}
			err := m.Run(t.Context(), append(tt.args, "team", "list"))
			if !errors.Is(err, errStop) {
				t.Fatalf("Run = %v; want %v", err, errStop)
			}
			if want := filepath.FromSlash(tt.want); got != want {
				t.Errorf("home = %q; want %q", got, want)
			}
		})
	}
	m := &Main{Stdout: &strings.Builder{}, Stderr: &strings.Builder{}, OpenStore: func(string) (Stores, error) { return Stores{}, errStop }}
	if err := m.Run(t.Context(), []string{"--home", "~bob/x", "team", "list"}); !isUsage(err) || !strings.Contains(err.Error(), "~bob/x") {
		t.Errorf("--home ~bob/x: %v; want a usage error naming it", err)
	}
}

var errStop = errors.New("stop here")
