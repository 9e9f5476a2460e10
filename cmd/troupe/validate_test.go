package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
