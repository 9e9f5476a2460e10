package main

import (
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
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
	if out, errOut, err := runIn(t, home, "-p", "--agent-teams", "--teammate-mode", "in-process", "--cwd", cwd,
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
