package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// coordinatorMode in a settings file turns coordinator mode on when
// neither the flag nor the variable says anything; a value of the wrong
// type is an error naming the file.
func TestCoordinatorModeFromSettings(t *testing.T) {
	dir := t.TempDir()
	cwd := filepath.Join(dir, "work")
	if err := os.MkdirAll(filepath.Join(cwd, ".troupe"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[{"match":{},"reply":{"text":"ok"},"repeat":true}]}`)
	settingsFile := filepath.Join(cwd, ".troupe", "settings.json")
	run := func() (string, error) {
		var out, errOut bytes.Buffer
		m := &Main{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
		err := m.Run(t.Context(), []string{"-p", "--trust", "--home", filepath.Join(dir, "home"), "--cwd", cwd, "--provider", "scripted",
			"--script", script, "--output-format", "stream-json", "hi"})
		return out.String(), err
	}
	writeFile(t, settingsFile, `{"coordinatorMode": true}`)
	out, err := run()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"tools":["Agent","SendMessage","ListAgents","TaskStop","subscribe_pr_activity","unsubscribe_pr_activity"]`) {
		t.Errorf("coordinatorMode true in settings: the lead's tools are not the coordinator's:\n%s", out)
	}
	writeFile(t, settingsFile, `{"coordinatorMode": "yes please"}`)
	if _, err := run(); err == nil || !strings.Contains(err.Error(), settingsFile) {
		t.Errorf("a bad coordinatorMode: err = %v, want one naming %s", err, settingsFile)
	}
}
