//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/team"
)

// A teammate asked for with use_splitpane false gets a tmux window of its
// own, and `troupe team hide|unhide` takes a split teammate's pane out of the
// shared window and back through the team file's hiddenPaneIds, which the
// running lead follows.
func TestPaneWindowAndHide(t *testing.T) {
	needTmux(t)
	sock := tmuxSocket(t)
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	turns := []map[string]any{
		{"match": map[string]any{"system": "You are troupe,", "turn": 0}, "reply": map[string]any{"tool_calls": []map[string]any{
			{"name": "TeamCreate", "input": map[string]string{"team_name": "win"}},
			{"name": "Agent", "input": map[string]any{"description": "solo", "name": "solo", "prompt": "work alone", "use_splitpane": false}},
			{"name": "Agent", "input": map[string]any{"description": "pair", "name": "pair", "prompt": "work beside the lead"}}}}},
		{"match": map[string]any{"system": "You are troupe,"}, "reply": map[string]any{"text": "waiting"}, "repeat": true},
		{"match": map[string]any{"system": "teammate"}, "reply": map[string]any{"text": "working", "delay_ms": 120000}, "repeat": true},
	}
	b, err := json.Marshal(map[string]any{"turns": turns})
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, string(b))
	lead, stdout, stderr := startLead(t, sock, home, cwd, script, "--teammate-mode", "tmux")

	// windowOf returns the tmux window of member name's pane, "" while it
	// has none.
	windowOf := func(name string) string {
		data, err := os.ReadFile(filepath.Join(home, "teams", "win", "config.json"))
		if err != nil {
			return ""
		}
		var c struct {
			Members []struct{ Name, TmuxPaneID string }
		}
		if json.Unmarshal(data, &c) != nil {
			return ""
		}
		for _, m := range c.Members {
			if m.Name == name && strings.HasPrefix(m.TmuxPaneID, "%") {
				out, err := exec.Command("tmux", "-L", sock, "display-message", "-p", "-t", m.TmuxPaneID, "#{window_name}").Output()
				if err == nil {
					return strings.TrimSpace(string(out))
				}
			}
		}
		return ""
	}
	waitWindow := func(name, want string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); windowOf(name) != want; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s's pane is in window %q; want %q\nstdout:\n%s\nstderr:\n%s", name, windowOf(name), want, stdout, stderr)
			}
		}
	}
	waitWindow("solo", "teammate-solo")
	waitWindow("pair", "swarm-view")

	team := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		m := &Main{Stdout: &out, Stderr: &out}
		if err := m.Run(t.Context(), append([]string{"team", "--home", home}, args...)); err != nil {
			t.Fatalf("troupe team %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return out.String()
	}
	if out := team("hide", "win", "pair"); !strings.Contains(out, "pair (pane %") || !strings.Contains(out, "is hidden") {
		t.Errorf("team hide said %q", out)
	}
	waitWindow("pair", "hidden-pair")
	team("unhide", "win", "pair")
	waitWindow("pair", "swarm-view")

	// An in-process or unknown member cannot be hidden, with a clear error.
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &out}
	err = m.Run(t.Context(), []string{"team", "--home", home, "hide", "win", "team-lead"})
	if err == nil || !strings.Contains(err.Error()+out.String(), "only a teammate in a tmux pane") {
		t.Errorf("team hide of the lead: %v %s; want an error naming tmux panes", err, out.String())
	}
	if len(liveTeammates(sock)) != 2 {
		t.Errorf("teammates running after hide and show: %d; want 2 (hiding ends nothing)", len(liveTeammates(sock)))
	}
	// The lead ends both, the windowed one too, when it is stopped.
	if err := lead.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = lead.Wait()
	if mates := liveTeammates(sock); len(mates) != 0 {
		t.Errorf("teammates still running after the lead ended: %v", mates)
	}
}

// A pane teammate is started with the lead's working folders and rules,
// as its in-process teammates have them: --add-dir (absolute, from the
// lead's folder), --allowedTools and --disallowedTools.
func TestPaneArgvInheritsTheLeadsFolders(t *testing.T) {
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	if err := os.MkdirAll(filepath.Join(cwd, "more"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(cwd)
	a := newApp(Main{Stderr: os.Stderr})
	h := &headless{}
	h.perm.AddDirs = []string{"more", "/abs/other"}
	h.perm.Allowed = []string{"Bash(npm test)"}
	h.perm.Disallowed = []string{"WebFetch"}
	argv, _, err := a.paneArgv(h, home, cwd)(team.Member{Name: "pane", AgentID: "pane@t", Model: "m1"}, swarm.SpawnRequest{}, "s-1", "")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(argv, " ")
	for _, want := range []string{"--add-dir " + filepath.Join(cwd, "more"), "--add-dir /abs/other",
		"--allowedTools Bash(npm test)", "--disallowedTools WebFetch", "--model m1"} {
		if !strings.Contains(got, want) {
			t.Errorf("pane argv lacks %q:\n%s", want, got)
		}
	}
}
