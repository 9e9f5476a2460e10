package team_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/team"
)

func TestValidateAgentName(t *testing.T) {
	tests := []struct {
		name string
		lead bool
		ok   bool
	}{
		{"helper", false, true},
		{"a", false, true},
		{"A_b-9", false, true},
		{"9lives", false, true},
		{strings.Repeat("n", 64), false, true},
		{team.LeadName, true, true},
		{team.LeadName, false, false},
		{"Team-Lead", true, false}, // only the exact lead name is the lead's
		{"TEAM-LEAD", false, false},
		{"main", false, false},
		{"Main", false, false},
		{"user", false, false},
		{"USER", false, false},
		{"system", false, false},
		{"System", false, false},
		{"fe1abf51-0000-4000-8000-000000000000", false, false}, // a session id
		{"FE1ABF51-0000-4000-8000-000000000000", false, false},
		{"fe1abf51", false, true},
		{"", false, false},
		{strings.Repeat("n", 65), false, false},
		{"-dash", false, false},
		{"_under", false, false},
		{"has space", false, false},
		{"a@b", false, false},
		{"a.b", false, false},
		{"a/b", false, false},
		{`a\b`, false, false},
		{"..", false, false},
		{"x\x00", false, false},
		{"tab\there", false, false},
		{"new\nline", false, false},
		{"ünï", false, false},
		{"\xff", false, false},
	}
	for _, tt := range tests {
		err := team.ValidateAgentName(tt.name, tt.lead)
		if got := err == nil; got != tt.ok {
			t.Errorf("ValidateAgentName(%q, %v) = %v; want ok=%v", tt.name, tt.lead, err, tt.ok)
		}
		if err != nil && !errors.Is(err, team.ErrInvalidName) {
			t.Errorf("ValidateAgentName(%q, %v) = %v; want it to match ErrInvalidName", tt.name, tt.lead, err)
		}
		var ne *team.NameError
		if err != nil && (!errors.As(err, &ne) || ne.Kind != "agent" || ne.Name != tt.name) {
			t.Errorf("ValidateAgentName(%q) = %#v; want a *NameError{Kind: agent, Name: %q}", tt.name, err, tt.name)
		}
	}
}

func TestValidateTeamName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"alpha", true},
		{"My Team", true},
		{"session-fe1abf51", true},
		{"v1.2_final", true},
		{" padded ", true},
		{strings.Repeat("t", 64), true},
		{"", false},
		{" ", false},
		{"---", false},
		{".", false},
		{"..", false},
		{"a..b", false},
		{"../x", false},
		{"a/b", false},
		{"/abs", false},
		{`a\b`, false},
		{`C:\x`, false},
		{"x\x00", false},
		{"tab\tname", false},
		{"bell\a", false},
		{"del\x7f", false},
		{strings.Repeat("t", 65), false},
		{"a:b", false},
		{"a*b", false},
		{"ünïcode", false},
		{"\xff\xfe", false},
		{"emoji🙂", false},
	}
	for _, tt := range tests {
		err := team.ValidateTeamName(tt.name)
		if got := err == nil; got != tt.ok {
			t.Errorf("ValidateTeamName(%q) = %v; want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && !errors.Is(err, team.ErrInvalidName) {
			t.Errorf("ValidateTeamName(%q) = %v; want it to match ErrInvalidName", tt.name, err)
		}
	}
}

// TestSanitizers uses the two folder-name rules of docs/protocol.md section 1.
func TestSanitizers(t *testing.T) {
	tests := []struct {
		in, team, path string
	}{
		{"session-1a2b3c4d", "session-1a2b3c4d", "session-1a2b3c4d"}, // both agree on session names
		{"My Team", "my-team", "My-Team"},
		{"a_b.c", "a-b-c", "a_b-c"},
		{"helper@session-1a2b3c4d", "helper-session-1a2b3c4d", "helper-session-1a2b3c4d"},
		{"../x", "---x", "---x"},
		{"ü", "-", "-"},
		{"ABC", "abc", "ABC"},
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := team.Sanitize(tt.in); got != tt.team {
			t.Errorf("Sanitize(%q) = %q; want %q", tt.in, got, tt.team)
		}
		if got := team.SanitizePath(tt.in); got != tt.path {
			t.Errorf("SanitizePath(%q) = %q; want %q", tt.in, got, tt.path)
		}
	}
}

func TestCanonicalName(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"alpha", "alpha", true},
		{"My Team", "my-team", true},
		{"  Padded  ", "padded", true},
		{"v1.2", "v1-2", true},
		{"../x", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, err := team.CanonicalName(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("CanonicalName(%q) = %q, %v; want %q, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		if err == nil {
			if again, err := team.CanonicalName(got); again != got || err != nil {
				t.Errorf("CanonicalName(%q) = %q, %v; want it idempotent", got, again, err)
			}
		}
	}
}

func TestSuffixedName(t *testing.T) {
	first := func(int) int { return 0 }
	last := func(n int) int { return n - 1 }
	tests := []struct {
		name string
		pick func(int) int
		want string
	}{
		{"alpha", first, "alpha-amber-comet"},
		{"alpha", last, "alpha-vivid-otter"},
		{"session-1a2b3c4d", first, "session-1a2b3c4d-amber-comet"},
	}
	for _, tt := range tests {
		if got := team.SuffixedName(tt.name, tt.pick); got != tt.want {
			t.Errorf("SuffixedName(%q) = %q; want %q", tt.name, got, tt.want)
		}
	}
	// Long names are cut to MaxNameLen, and the result is still a valid,
	// canonical team name that differs from the original.
	for _, n := range []int{50, 52, 53, 60, 64} {
		name := strings.Repeat("a", n-1) + "z"
		for _, pick := range []func(int) int{first, last} {
			got := team.SuffixedName(name, pick)
			if len(got) > team.MaxNameLen || got == name || team.ValidateTeamName(got) != nil || team.Sanitize(got) != got {
				t.Errorf("SuffixedName(%d-byte name) = %q (%d bytes); want a different valid canonical name of at most %d bytes", n, got, len(got), team.MaxNameLen)
			}
		}
	}
}

func TestUniqueMemberName(t *testing.T) {
	c := team.Config{Members: []team.Member{
		{Name: team.LeadName}, {Name: "helper"}, {Name: "Helper-2"}, {Name: "tester"},
	}}
	tests := []struct{ in, want string }{
		{"new", "new"},
		{"helper", "helper-3"},
		{"HELPER", "HELPER-3"},
		{"tester", "tester-2"},
		{"Team-Lead", "Team-Lead-2"},
		{"helper-2", "helper-2-2"},
	}
	for _, tt := range tests {
		if got := c.UniqueMemberName(tt.in); got != tt.want {
			t.Errorf("UniqueMemberName(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestNextColor(t *testing.T) {
	roster := func(colors ...string) team.Config {
		c := team.Config{Members: []team.Member{{Name: team.LeadName}}}
		for _, col := range colors {
			c.Members = append(c.Members, team.Member{Name: "m" + col, Color: col})
		}
		return c
	}
	all := team.Palette[1:]
	tests := []struct {
		name string
		c    team.Config
		want string
	}{
		{"lead only", roster(), "blue"},
		{"blue taken", roster("blue"), "green"},
		{"gap is filled first", roster("blue", "yellow"), "green"},
		{"only cyan left", roster(all[:6]...), "cyan"},
		{"all taken: least used, first after the lead's", roster(all...), "blue"},
		{"all taken, blue twice", roster(append(all, "blue")...), "green"},
		{"a teammate holding red", roster("red"), "blue"},
		{"unknown colors ignored", roster("magenta", ""), "blue"},
	}
	for _, tt := range tests {
		if got := tt.c.NextColor(); got != tt.want {
			t.Errorf("NextColor(%s) = %q; want %q", tt.name, got, tt.want)
		}
	}
	// Adding members in turn gives every teammate color once before any repeat.
	c := roster()
	for i, want := range all {
		got := c.NextColor()
		if got != want {
			t.Errorf("color of teammate %d = %q; want %q", i+1, got, want)
		}
		c.Members = append(c.Members, team.Member{Name: want, Color: got})
	}
}

func TestParseAgentID(t *testing.T) {
	tests := []struct {
		id, name, team string
		ok             bool
	}{
		{"helper@crew", "helper", "crew", true},
		{"team-lead@session-1a2b3c4d", team.LeadName, "session-1a2b3c4d", true},
		{"noat", "", "", false},
		{"@crew", "", "", false},
		{"helper@", "", "", false},
		{"a@b@c", "", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		name, tm, err := team.ParseAgentID(tt.id)
		if name != tt.name || tm != tt.team || (err == nil) != tt.ok {
			t.Errorf("ParseAgentID(%q) = %q, %q, %v; want %q, %q, ok=%v", tt.id, name, tm, err, tt.name, tt.team, tt.ok)
		}
		if tt.ok {
			if got := team.AgentID(name, tm); got != tt.id {
				t.Errorf("AgentID(%q, %q) = %q; want %q", name, tm, got, tt.id)
			}
		}
	}
	if got := team.LeadID("crew"); got != "team-lead@crew" {
		t.Errorf("LeadID(crew) = %q; want team-lead@crew", got)
	}
}
