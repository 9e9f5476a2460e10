package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/permission/settings"
)

// --no-alt-screen in the real terminal: a long answer goes into the
// terminal's own scrollback (capture-pane's history holds its first
// lines, scrolled off the screen); /clear starts a fresh conversation
// (the next prompt reaches the model with no earlier turn) and /model
// NAME switches the model.
func TestTUINoAltScreenClearModel(t *testing.T) {
	dir := t.TempDir()
	var long []string
	for i := 1; i <= 40; i++ {
		long = append(long, fmt.Sprintf("long line %02d", i))
	}
	script := `{"turns":[
 {"match":{"user":"long"},"reply":{"text":"` + strings.Join(long, `\n`) + `\nEND-LONG"}},
 {"match":{"user":"after","turn":0},"reply":{"text":"FRESH-CONVERSATION"}},
 {"match":{"user":"after"},"reply":{"text":"OLD-HISTORY-SEEN"}}
]}`
	scriptFile := filepath.Join(dir, "script.json")
	writeFile(t, scriptFile, script)
	p := startTUISize(t, 80, 20, dir, []string{"TROUPE_HOME=" + filepath.Join(dir, "home"), "HOME=" + dir},
		"--provider", "scripted", "--script", scriptFile, "--no-alt-screen")

	p.submit("long answer please")
	p.wait("END-LONG", 10*time.Second)
	history := p.tmux("capture-pane", "-p", "-t", "0", "-S", "-")
	if !strings.Contains(history, "long line 01") || strings.Contains(p.screen(), "long line 01") {
		t.Errorf("the answer's first line is not in the scrollback (or still on screen):\n%s", history)
	}

	p.submit("/model scripted-two")
	p.wait("Model: scripted-two from the lead's next turn", 5*time.Second)
	p.submit("/clear")
	p.wait("A fresh conversation", 5*time.Second)
	p.submit("after the clear")
	s := p.wait("FRESH-CONVERSATION", 10*time.Second)
	if strings.Contains(s, "OLD-HISTORY-SEEN") {
		t.Errorf("the model saw the conversation before /clear:\n%s", s)
	}
	p.submit("/model")
	p.wait("Model: scripted-two (/model NAME", 5*time.Second)
	p.quit()
}

// The setting altScreen: the last file that sets it wins; absent, the
// alternate screen stays; a value that is not a boolean names its file.
func TestSettingsNoAltScreen(t *testing.T) {
	dir := t.TempDir()
	user, project := filepath.Join(dir, "user.json"), filepath.Join(dir, "project.json")
	files := []settings.File{{Path: user}, {Path: project}}
	for _, tt := range []struct {
		user, project string
		want          bool
	}{
		{`{}`, `{}`, false},
		{`{"altScreen": false}`, `{}`, true},
		{`{"altScreen": false}`, `{"altScreen": true}`, false},
		{`{}`, `{"altScreen": false}`, true},
	} {
		writeFile(t, user, tt.user)
		writeFile(t, project, tt.project)
		if got, err := settingsNoAltScreen(files); err != nil || got != tt.want {
			t.Errorf("user %s, project %s: %v, %v; want %v", tt.user, tt.project, got, err, tt.want)
		}
	}
	writeFile(t, project, `{"altScreen": "no"}`)
	if _, err := settingsNoAltScreen(files); err == nil || !strings.Contains(err.Error(), project) {
		t.Errorf("altScreen \"no\": %v, want an error naming %s", err, project)
	}
}
