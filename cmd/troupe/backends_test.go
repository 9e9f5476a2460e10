package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/backend/backendtest"
)

// realTmux starts a tmux server on a socket path of its own, as the
// terminal a lead would run in, and returns $TMUX and $TMUX_PANE as tmux
// sets them in its panes.
func realTmux(t *testing.T) (tmuxEnv, pane string) {
	t.Helper()
	needTmux(t)
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	if out, err := exec.Command("tmux", "-S", sock, "new-session", "-d", "-x", "80", "-y", "24", "sleep 600").CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", sock, "kill-server").Run() })
	out, err := exec.Command("tmux", "-S", sock, "display-message", "-p", "-t", "0", "#{pid},#{pane_id}").Output()
	if err != nil {
		t.Fatalf("tmux display-message: %v", err)
	}
	pid, pane, _ := strings.Cut(strings.TrimSpace(string(out)), ",")
	return sock + "," + pid + ",0", pane
}

// Auto mode picks the teammate backend from where the lead runs: inside
// tmux (a real server), inside iTerm2 (the fake it2 on $PATH), neither,
// and with $TMUX naming a server that is gone (a stale variable: in-process,
// saying why, not a failure). A pane backend has in-process as its
// fallback.
func TestPickBackendAuto(t *testing.T) {
	it2, _ := backendtest.FakeIt2(t)
	t.Setenv("PATH", filepath.Dir(it2)+string(os.PathListSeparator)+os.Getenv("PATH"))
	tmuxEnv, pane := realTmux(t)
	gone := filepath.Join(t.TempDir(), "gone.sock")
	for _, tt := range []struct {
		name     string
		env      map[string]string
		want     string
		reason   string
		fallback bool
	}{
		{"neither", nil, backend.InProcess, "not inside tmux or iTerm2", false},
		{"inside tmux", map[string]string{"TMUX": tmuxEnv, "TMUX_PANE": pane}, backend.Tmux, "running inside tmux", true},
		{"inside iTerm2", map[string]string{"TERM_PROGRAM": "iTerm.app", "ITERM_SESSION_ID": "w0t0p0:LEADER-1"}, backend.ITerm2, "running inside iTerm2 with the it2 command", true},
		{"iTerm2 in tmux", map[string]string{"TERM_PROGRAM": "iTerm.app", "TMUX": tmuxEnv, "TMUX_PANE": pane}, backend.Tmux, "running inside tmux", true},
		{"$TMUX names no server", map[string]string{"TMUX": gone + ",4242,0", "TMUX_PANE": "%0"}, backend.InProcess,
			"which is not there (stat " + gone + ": no such file or directory): is the tmux server this shell ran in gone?); in-process instead", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newApp(Main{Getenv: func(k string) string { return tt.env[k] }})
			be, fallback, reason, err := a.pickBackend(backend.ModeAuto)
			if err != nil {
				t.Fatalf("pickBackend: %v", err)
			}
			defer be.Close(context.Background())
			if be.Name() != tt.want || !strings.Contains(reason, tt.reason) || (fallback != nil) != tt.fallback {
				t.Errorf("picked %s (%q), fallback %v; want %s (%q), fallback %v", be.Name(), reason, fallback != nil, tt.want, tt.reason, tt.fallback)
			}
		})
	}
}

// An explicit tmux mode with $TMUX naming a server that is gone is an
// error saying so, before any teammate is spawned.
func TestPickBackendTmuxGone(t *testing.T) {
	needTmux(t)
	gone := filepath.Join(t.TempDir(), "gone.sock")
	env := map[string]string{"TMUX": gone + ",4242,0", "TMUX_PANE": "%0"}
	a := newApp(Main{Getenv: func(k string) string { return env[k] }})
	_, _, _, err := a.pickBackend(backend.ModeTmux)
	if err == nil || !strings.Contains(err.Error(), "$TMUX names the tmux server socket "+gone+", which is not there") {
		t.Errorf("pickBackend(tmux) = %v; want an error naming the missing socket", err)
	}
}

// A team run in auto mode under a $TMUX whose server is gone runs its
// teammate in-process and says why on the timeline, up front; the run
// succeeds.
func TestTeamRunStaleTmux(t *testing.T) {
	needTmux(t)
	dir := t.TempDir()
	home, cwd := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	writeIn(t, filepath.Join(cwd, "x"), "")
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"stale"}},
   {"name":"Agent","input":{"description":"helper","name":"ann","prompt":"say ANN-WAS-HERE"}}]}},
 {"match":{"user":"say ANN-WAS-HERE","turn":0},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","message":"ANN-WAS-HERE","summary":"done"}}]}},
 {"match":{"user":"say ANN-WAS-HERE"},"reply":{"text":"sent"},"repeat":true},
 {"match":{"system":"You are troupe,"},"reply":{"text":"done"},"repeat":true}
]}`)
	gone := filepath.Join(dir, "gone.sock")
	env := map[string]string{"TMUX": gone + ",4242,0", "TMUX_PANE": "%0"}
	var out, errOut strings.Builder
	m := &Main{Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] }, NewID: func() string { return "session-1" }}
	err := m.Run(t.Context(), []string{"--home", home, "-p", "--trust", "--agent-teams", "--explicit-teams", "--cwd", cwd, "--provider", "scripted", "--script", script, "--permission-mode", "bypassPermissions", "go"})
	if err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	if !strings.Contains(errOut.String(), "teammates run in-process (tmux failed (") || !strings.Contains(errOut.String(), "$TMUX names the tmux server socket "+gone) {
		t.Errorf("the timeline does not say why teammates run in-process:\n%s", errOut.String())
	}
	if !strings.Contains(errOut.String(), "spawned ann (blue, in-process)") || !strings.Contains(errOut.String(), "ann → lead: done") {
		t.Errorf("ann did not run in-process and report:\n%s", errOut.String())
	}
}
