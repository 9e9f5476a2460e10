package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/troupe-dev/troupe/cli"
)

// A fresh home is owner-only: a team run (the team file, inboxes, the
// task list, its locks, the session record, transcripts, logs) and a
// settings edit leave every folder 0700 and every file 0600, whatever the
// umask.
func TestFreshHomeIsOwnerOnly(t *testing.T) {
	old := syscall.Umask(0o002) // the loosest common umask: modes are troupe's
	t.Cleanup(func() { syscall.Umask(old) })
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"modes"}},
   {"name":"TaskCreate","input":{"subject":"say hi","description":"say hi"}},
   {"name":"Agent","input":{"description":"greeter","name":"ann","prompt":"say hi"}}]}},
 {"match":{"system":"You are troupe,","user":"teammate-idle-digest"},"reply":{"tool_calls":[
   {"name":"SendMessage","input":{"to":"ann","message":{"type":"shutdown_request","reason":"done"}}}]}},
 {"match":{"system":"You are troupe,"},"reply":{"text":"noted"},"repeat":true},
 {"match":{"system":"You are teammate","user":"shutdown_request"},"reply":{"tool_calls":[
   {"name":"SendMessage","input":{"to":"team-lead","message":{"type":"shutdown_response","request_id":"{{capture:\"request_id\": \"(shutdown-[^\"]+)\"}}","approve":true}}}]},"repeat":true},
 {"match":{"system":"You are teammate"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","message":"HI","summary":"hi"}}]}},
 {"match":{"system":"You are teammate"},"reply":{"text":"HI"},"repeat":true}
]}`)
	if out, errOut, err := runIn(t, home, "-p", "--agent-teams", "--explicit-teams", "--teammate-mode", "in-process", "--cwd", cwd,
		"--provider", "scripted", "--script", script, "--keep-team", "go"); err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, out, errOut)
	}
	if out, errOut, err := runIn(t, home, "mcp", "add", "--scope", "user", "srv", "--", "/bin/true"); err != nil {
		t.Fatalf("mcp add: %v\n%s\n%s", err, out, errOut)
	}
	var seen []string
	err := filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(home, path)
		seen = append(seen, rel)
		switch {
		case fi.IsDir() && fi.Mode().Perm() != 0o700:
			t.Errorf("folder %s is %v; want 0700", rel, fi.Mode().Perm())
		case fi.Mode().IsRegular() && fi.Mode().Perm() != 0o600:
			t.Errorf("file %s is %v; want 0600", rel, fi.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(seen, "\n")
	for _, want := range []string{"teams/modes/config.json", "teams/modes/inboxes/team-lead.json", "tasks/modes/1.json", "settings.json"} {
		if !strings.Contains(all, want) {
			t.Errorf("the run made no %s; the home holds:\n%s", want, all)
		}
	}
}

// A home shared with Claude Code keeps the modes of what exists: troupe
// never changes an existing folder's mode, and what it adds is
// owner-only.
func TestSharedHomeKeepsExistingModes(t *testing.T) {
	home := filepath.Join(t.TempDir(), ".claude")
	teams := filepath.Join(home, "teams")
	if err := os.MkdirAll(teams, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{home, teams} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h := &harness{t: t, home: home, openStore: cli.OpenFileStore, env: map[string]string{}}
	h.ok("team", "create", "mixed")
	for d, want := range map[string]fs.FileMode{home: 0o755, teams: 0o755, filepath.Join(teams, "mixed"): 0o700} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s is %v; want %v", d, fi.Mode().Perm(), want)
		}
	}
	fi, err := os.Stat(filepath.Join(teams, "mixed", "config.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the new team file: %v, %v; want 0600", fi, err)
	}
}
