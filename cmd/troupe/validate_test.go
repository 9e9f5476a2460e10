package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/team"
)

// inbox send --color takes a palette color, as team add --color does, and
// team add --cwd an existing folder, as the headless run's --cwd does.
func TestColorAndCwdValidated(t *testing.T) {
	forEachStore(t, func(t *testing.T, h *harness) {
		h.roster()
		dir := t.TempDir()
		file := filepath.Join(dir, "plain")
		if err := os.WriteFile(file, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			args []string
			want string
		}{
			{[]string{"inbox", "send", "--team", "alpha", "--from", "bob", "--to", "alice", "--color", "\x1b[31m", "hi"}, "--color"},
			{[]string{"inbox", "send", "--team", "alpha", "--from", "bob", "--to", "alice", "--color", "mauve", "hi"}, "want one of red"},
			{[]string{"team", "add", "alpha", "carol", "--cwd", filepath.Join(dir, "missing")}, "--cwd"},
			{[]string{"team", "add", "alpha", "carol", "--cwd", file}, "not a folder"},
		}
		for _, tt := range tests {
			err := h.fail(tt.args...)
			if !isUsage(err) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("troupe %s = %v; want a usage error mentioning %q", strings.Join(tt.args, " "), err, tt.want)
			}
		}
		var m struct{ Cwd string }
		h.json(&m, "team", "add", "alpha", "dave", "--cwd", dir)
		if m.Cwd != dir {
			t.Errorf("team add --cwd %s stored cwd %q", dir, m.Cwd)
		}
		h.ok("inbox", "send", "--team", "alpha", "--from", "bob", "--to", "alice", "--color", "cyan", "hi")
	})
}

// team show lists a member troupe considers invalid (written by another
// program), marked with the reason, instead of hiding it.
func TestTeamShowMarksInvalidMembers(t *testing.T) {
	forEachStore(t, func(t *testing.T, h *harness) {
		h.roster()
		s, err := h.openStore(h.home)
		if err != nil {
			t.Fatal(err)
		}
		if s.Close != nil {
			defer s.Close()
		}
		if _, err := s.Teams.Update(t.Context(), "alpha", func(c *team.Config) error {
			c.Members = append(c.Members, team.Member{Name: "odd.name", AgentID: "odd.name@alpha", Color: "teal"})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		out := h.ok("team", "show", "alpha")
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "odd.name") {
				line = l
			}
		}
		if !strings.Contains(line, "(invalid: ") || !strings.Contains(line, `color "teal" is not in the palette`) {
			t.Errorf("team show: odd.name's row = %q; want it marked invalid with the reasons\n%s", line, out)
		}
		if strings.Contains(out, "alice (invalid") || strings.Contains(out, "bob (invalid") {
			t.Errorf("team show marked a valid member:\n%s", out)
		}
	})
}
