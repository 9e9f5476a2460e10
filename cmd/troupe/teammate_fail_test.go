package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A pane teammate that cannot start (bad flags, no model) tells the lead
// through its inbox and writes why to its log, so the lead is not left
// waiting for it.
func TestTeammateStartFailureReachesLead(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"bad flag", []string{"--no-such-flag"}, "unknown flag: --no-such-flag"},
		{"no model", []string{"--provider", "scripted", "--script", "/nonexistent/script.json"}, "/nonexistent/script.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			env := func(string) string { return "" }
			run := func(args ...string) (string, error) {
				var out bytes.Buffer
				m := &Main{Stdout: &out, Stderr: &out, Getenv: env}
				err := m.Run(t.Context(), append([]string{"--home", home}, args...))
				return out.String(), err
			}
			if out, err := run("team", "create", "t"); err != nil {
				t.Fatalf("team create: %v\n%s", err, out)
			}
			if out, err := run("team", "add", "t", "helper"); err != nil {
				t.Fatalf("team add: %v\n%s", err, out)
			}
			args := append([]string{"--agent-id", "helper@t", "--agent-name", "helper", "--team-name", "t", "--cwd", home}, tt.args...)
			if _, err := run(args...); err == nil {
				t.Fatal("the teammate started")
			}
			inbox, err := run("inbox", "read", "--team", "t", "--agent", "team-lead")
			if err != nil {
				t.Fatalf("inbox read: %v", err)
			}
			if !strings.Contains(inbox, "Teammate helper could not start") || !strings.Contains(inbox, tt.want) {
				t.Errorf("the lead's inbox lacks the failure (%q):\n%s", tt.want, inbox)
			}
			log, err := os.ReadFile(filepath.Join(home, "logs", "t", "helper.log"))
			if err != nil || !strings.Contains(string(log), "could not start") {
				t.Errorf("helper's log: %q, %v", log, err)
			}
		})
	}
}
