package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/cli/mate"
	"github.com/troupe-dev/troupe/llm/llmtest"
)

// tuiPane is the interactive lead running in a pane of a private tmux
// server, driven with send-keys and read with capture-pane.
type tuiPane struct {
	t    *testing.T
	sock string
	dir  string
}

// startTUI runs the test binary as `troupe ARGS` (the interactive lead)
// in a 100x30 pane, in dir, with env added; the pane prints EXITED and
// the exit status when troupe ends.
func startTUI(t *testing.T, dir string, env []string, args ...string) *tuiPane {
	t.Helper()
	return startTUISize(t, 100, 30, dir, env, args...)
}

// startTUISize is startTUI in a pane of w columns and h lines.
func startTUISize(t *testing.T, w, h int, dir string, env []string, args ...string) *tuiPane {
	t.Helper()
	for _, kv := range env {
		if home, ok := strings.CutPrefix(kv, "TROUPE_HOME="); ok {
			trustTemp(t, home) // the test's own project (main_test.go)
		}
	}
	p := launchTUISize(t, w, h, dir, env, args...)
	p.wait("Ask the lead", 20*time.Second)
	return p
}

// launchTUI starts troupe ARGS in a 100x30 pane as startTUI does, without
// trusting anything or waiting for the lead.
func launchTUI(t *testing.T, dir string, env []string, args ...string) *tuiPane {
	t.Helper()
	return launchTUISize(t, 100, 30, dir, env, args...)
}

// launchTUISize is launchTUI in a pane of w columns and h lines.
func launchTUISize(t *testing.T, w, h int, dir string, env []string, args ...string) *tuiPane {
	t.Helper()
	needTmux(t)
	p := &tuiPane{t: t, sock: tmuxSocket(t), dir: dir}
	var cmd strings.Builder
	fmt.Fprintf(&cmd, "cd %q && env", dir)
	for _, kv := range append([]string{asTroupeEnv + "=1", "TERM=xterm-256color", "NO_COLOR=1"}, env...) {
		fmt.Fprintf(&cmd, " %q", kv)
	}
	fmt.Fprintf(&cmd, " %q", os.Args[0])
	for _, a := range args {
		fmt.Fprintf(&cmd, " %q", a)
	}
	cmd.WriteString(" 2>troupe.err; echo EXITED $?; sleep 60")
	p.tmux("new-session", "-d", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), cmd.String())
	return p
}

func (p *tuiPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", p.sock}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys sends tmux key names (Enter, Escape, C-b, S-Down) or text.
func (p *tuiPane) keys(keys ...string) { p.tmux(append([]string{"send-keys", "-t", "0"}, keys...)...) }

// submit types a line and presses Enter.
func (p *tuiPane) submit(s string) {
	p.text(s)
	p.keys("Enter")
}

// text types text literally.
func (p *tuiPane) text(s string) { p.tmux("send-keys", "-t", "0", "-l", s) }

func (p *tuiPane) screen() string { return p.tmux("capture-pane", "-p", "-t", "0") }

// wait waits for want on the screen and returns the screen.
func (p *tuiPane) wait(want string, d time.Duration) string {
	p.t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := p.screen()
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			errText, _ := os.ReadFile(filepath.Join(p.dir, "troupe.err"))
			p.t.Fatalf("%q did not appear within %s; the screen:\n%s\nstderr:\n%s", want, d, s, errText)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// quit presses Ctrl+C until troupe asks for a second one (the first
// interrupts the lead when it is working), then once more, and waits for
// troupe to exit 0.
func (p *tuiPane) quit() {
	p.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		p.keys("C-c")
		if waitFor(p, "Press Ctrl+C again", time.Second) {
			break
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("Ctrl+C never asked for a second press:\n%s", p.screen())
		}
	}
	p.keys("C-c")
	p.wait("EXITED 0", 40*time.Second)
}

// waitFor reports whether want appears on the screen within d.
func waitFor(p *tuiPane, want string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !strings.Contains(p.screen(), want) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// processesWith returns the pids of processes whose command line has
// every part in args.
func processesWith(args ...string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if bytes.Equal(bytes.TrimRight(b, "\x00"), []byte(strings.Join(args, "\x00"))) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// The lead alone: a streamed answer, a Bash question answered with 1,
// Esc interrupting, Ctrl+B backgrounding a long turn (its pill appears,
// the prompt is free, its end reaches the lead), /tasks listing a
// background shell, and Ctrl+C twice leaving nothing running.
func TestTUILead(t *testing.T) {
	dir := t.TempDir()
	script := `{"turns":[
 {"match":{"user":"hello"},"reply":{"text":"STREAMED **ANSWER** from the lead"}},
 {"match":{"user":"make a file"},"reply":{"text":"Making it.","tool_calls":[{"name":"Bash","input":{"command":"touch lead-made-this && echo MADE-IT"}}]}},
 {"match":{"tool_result":"Bash","user":"MADE-IT"},"reply":{"text":"LEAD-RAN-IT"}},
 {"match":{"user":"slow"},"reply":{"delay_ms":60000,"text":"never"}},
 {"match":{"user":"long"},"reply":{"delay_ms":2500,"text":"LONG-FINISHED"}},
 {"match":{"user":"quick"},"reply":{"text":"QUICK-ANSWER"}},
 {"match":{"user":"SYSTEM NOTIFICATION"},"reply":{"text":"NOTED-THE-TASK"},"repeat":true},
 {"match":{"user":"start a server"},"reply":{"tool_calls":[{"name":"Bash","input":{"command":"sleep 37","run_in_background":true}}]}},
 {"match":{"tool_result":"Bash"},"reply":{"text":"SERVER-STARTED"}}
]}`
	scriptFile := filepath.Join(dir, "script.json")
	writeFile(t, scriptFile, script)
	home := filepath.Join(dir, "home")
	p := startTUI(t, dir, []string{"TROUPE_HOME=" + home, "HOME=" + dir}, "--provider", "scripted", "--script", scriptFile)

	p.submit("hello")
	p.wait("STREAMED ANSWER from the lead", 10*time.Second)

	p.submit("make a file")
	s := p.wait("team-lead asks: Bash", 10*time.Second)
	if !strings.Contains(s, "$ touch lead-made-this && echo MADE-IT") {
		t.Errorf("the dialog does not show the command:\n%s", s)
	}
	p.keys("1")
	p.wait("LEAD-RAN-IT", 10*time.Second)
	if _, err := os.Stat(filepath.Join(dir, "lead-made-this")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}

	p.submit("slow")
	p.wait("Esc to interrupt", 10*time.Second)
	p.keys("Escape")
	p.wait("Interrupted", 10*time.Second)

	p.submit("long")
	p.wait("Ctrl+B to background", 10*time.Second)
	p.keys("C-b")
	s = p.wait("1 agent", 10*time.Second)
	if !strings.Contains(s, "went on in the background") {
		t.Errorf("no word of the backgrounded turn:\n%s", s)
	}
	p.submit("quick")
	p.wait("QUICK-ANSWER", 10*time.Second)
	p.wait("NOTED-THE-TASK", 15*time.Second) // the long turn ended and the lead was told

	p.submit("start a server")
	p.wait("team-lead asks: Bash", 10*time.Second)
	p.keys("1")
	p.wait("SERVER-STARTED", 10*time.Second)
	p.submit("/tasks")
	s = p.wait("local_bash", 10*time.Second)
	if !strings.Contains(s, "sleep 37") || !strings.Contains(s, "running") {
		t.Errorf("/tasks does not list the running shell:\n%s", s)
	}
	p.keys("Escape")
	p.wait("Ask the lead", 5*time.Second)
	p.quit()
	if pids := processesWith("sleep", "37"); len(pids) > 0 {
		t.Errorf("the background shell outlived the session: pids %v", pids)
	}
}

// A 60-line command in the permission dialog at 80x24: the answers stay
// on screen, a marker says how much is below, 1 is refused until the
// command's last line has been shown, End scrolls to it, and then 1 runs
// the command whole.
func TestTUILongCommand(t *testing.T) {
	dir := t.TempDir()
	var cmd strings.Builder
	for i := 1; i < 60; i++ {
		fmt.Fprintf(&cmd, "echo step %02d >> log.txt\n", i)
	}
	cmd.WriteString("touch tail-ran && echo TAIL-RAN")
	in, _ := json.Marshal(map[string]string{"command": cmd.String()})
	script := `{"turns":[
 {"match":{"user":"run it"},"reply":{"tool_calls":[{"name":"Bash","input":` + string(in) + `}]}},
 {"match":{"tool_result":"Bash","user":"TAIL-RAN"},"reply":{"text":"RAN-THE-WHOLE-SCRIPT"}}
]}`
	scriptFile := filepath.Join(dir, "script.json")
	writeFile(t, scriptFile, script)
	p := startTUISize(t, 80, 24, dir, []string{"TROUPE_HOME=" + filepath.Join(dir, "home"), "HOME=" + dir}, "--provider", "scripted", "--script", scriptFile)

	p.submit("run it")
	s := p.wait("team-lead asks: Bash", 10*time.Second)
	for _, want := range []string{"1 once · 3 deny, say why · Esc deny", "more lines below", "$ echo step 01 >> log.txt"} {
		if !strings.Contains(s, want) {
			t.Errorf("the dialog lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "touch tail-ran") {
		t.Fatalf("the last line shows at once in a 24-line pane: the test means nothing\n%s", s)
	}
	p.keys("1")
	s = p.wait("Read it all first", 5*time.Second)
	if _, err := os.Stat(filepath.Join(dir, "tail-ran")); err == nil {
		t.Fatal("1 ran the command before its tail was on screen")
	}
	p.keys("PgDn")
	p.wait("more lines above", 5*time.Second)
	p.keys("End")
	s = p.wait("touch tail-ran && echo TAIL-RAN", 5*time.Second)
	if !strings.Contains(s, "1 once · 3 deny") || !strings.Contains(s, "end of") {
		t.Errorf("at the end, the answers or the end marker are off screen:\n%s", s)
	}
	if lines := strings.Split(strings.TrimRight(s, "\n"), "\n"); len(lines) > 24 {
		t.Errorf("the screen has %d lines in a 24-line pane", len(lines))
	}
	p.keys("1")
	p.wait("RAN-THE-WHOLE-SCRIPT", 10*time.Second)
	if b, err := os.ReadFile(filepath.Join(dir, "log.txt")); err != nil || strings.Count(string(b), "step") != 59 {
		t.Errorf("log.txt after the run: %q, %v; want 59 steps", b, err)
	}
	p.quit()
}

// Model text that would hide part of a command from the person (SGR 8,
// concealed) or reorder it (U+202E) shows as escapes in the real
// terminal, and "always" on a command with a '*' names no wildcard.
func TestTUIHostileCommand(t *testing.T) {
	dir := t.TempDir()
	in, _ := json.Marshal(map[string]string{"command": "echo safe \x1b[8m; touch evil\x1b[0m # \u202egnp.exe"})
	star, _ := json.Marshal(map[string]string{"command": "python3 '*'"})
	script := `{"turns":[
 {"match":{"user":"hide it"},"reply":{"tool_calls":[{"name":"Bash","input":` + string(in) + `}]}},
 {"match":{"user":"star"},"reply":{"tool_calls":[{"name":"Bash","input":` + string(star) + `}]}},
 {"match":{"tool_result":"Bash"},"reply":{"text":"DONE-HERE"},"repeat":true}
]}`
	scriptFile := filepath.Join(dir, "script.json")
	writeFile(t, scriptFile, script)
	p := startTUISize(t, 80, 24, dir, []string{"TROUPE_HOME=" + filepath.Join(dir, "home"), "HOME=" + dir}, "--provider", "scripted", "--script", scriptFile)
	p.submit("hide it")
	s := p.wait("team-lead asks: Bash", 10*time.Second)
	if want := `$ echo safe \x1b[8m; touch evil\x1b[0m # \u202egnp.exe`; !strings.Contains(s, want) {
		t.Errorf("the dialog does not show %q:\n%s", want, s)
	}
	if !strings.Contains(s, "2 always is not offered") {
		t.Errorf("a two-command line offers an always rule:\n%s", s)
	}
	p.keys("Escape")
	p.wait("DONE-HERE", 10*time.Second)
	p.submit("star")
	s = p.wait("2 always adds the rule Bash(python3 '*')", 10*time.Second)
	p.keys("Escape")
	// The denial is on screen before Ctrl+C: an Escape and a Ctrl+C sent
	// together read as one Alt+Ctrl+C.
	p.wait("Bash(python3 '*') denied", 10*time.Second)
	p.quit()
	if _, err := os.Stat(filepath.Join(dir, "evil")); err == nil {
		t.Error("the denied command ran")
	}
}

// A team: a teammate's question answered with 2 (allow always) is not
// asked again of another teammate; Shift+Down and Enter open a teammate's
// view, where a typed line reaches it; Ctrl+C twice shuts the team down.
func TestTUITeam(t *testing.T) {
	dir := t.TempDir()
	script := `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"text":"Forming the team.","tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"tui-team","description":"test the lead's screen"}},
   {"name":"Agent","input":{"description":"first","name":"alice","prompt":"make the team file"}}]}},
 {"match":{"system":"You are troupe,","user":"ALICE-DONE"},"reply":{"tool_calls":[
   {"name":"Agent","input":{"description":"second","name":"bob","prompt":"make the team file too"}}]}},
 {"match":{"system":"You are troupe,"},"reply":{"text":"Noted."},"repeat":true},
 {"match":{"system":"You are teammate","user":"shutdown_request"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","message":{"type":"shutdown_response","request_id":"{{capture:\"request_id\": \"(shutdown-[^\"]+)\"}}","approve":true}}}]},"repeat":true},
 {"match":{"system":"You are teammate","turn":0},"reply":{"tool_calls":[{"name":"Bash","input":{"command":"touch team-file"}}]},"repeat":true},
 {"match":{"system":"You are teammate alice","tool_result":"Bash"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","summary":"done","message":"ALICE-DONE"}}]}},
 {"match":{"system":"You are teammate bob","tool_result":"Bash"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","summary":"done","message":"BOB-DONE"}}]}},
 {"match":{"system":"You are teammate alice","user":"long-job"},"reply":{"delay_ms":60000,"text":"never"}},
 {"match":{"system":"You are teammate alice","user":"ping-from-person"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","summary":"pong","message":"PONG-FROM-ALICE"}}]}},
 {"match":{"system":"You are teammate"},"reply":{"text":"Waiting."},"repeat":true}
]}`
	scriptFile := filepath.Join(dir, "script.json")
	writeFile(t, scriptFile, script)
	home := filepath.Join(dir, "home")
	p := startTUI(t, dir, []string{"TROUPE_HOME=" + home, "HOME=" + dir, mate.EnvAgentTeams + "=1"},
		"--provider", "scripted", "--script", scriptFile, "--teammate-mode", "in-process", "--explicit-teams", "--shutdown-answer-timeout", "10s")

	p.submit("form a team")
	s := p.wait("alice asks: Bash", 20*time.Second)
	if !strings.Contains(s, "2 always adds the rule Bash(touch team-file), for the whole team") {
		t.Errorf("the teammate's dialog does not offer allowing for the team:\n%s", s)
	}
	p.keys("2")
	p.wait("alice: ALICE-DONE", 15*time.Second)
	s = p.wait("bob: BOB-DONE", 20*time.Second)
	if strings.Contains(s, "bob asks") {
		t.Errorf("bob was asked again after allow always:\n%s", s)
	}
	if !strings.Contains(s, "allowed always (Bash(touch team-file))") {
		t.Errorf("the answer is not on the screen:\n%s", s)
	}
	if !strings.Contains(s, "○ alice idle") {
		t.Errorf("the strip does not show alice idle:\n%s", s)
	}

	p.keys("S-Down")
	p.keys("Enter")
	p.wait("Message alice", 5*time.Second)
	// Her view shows her transcript: her calls as actions.
	p.wait(`Bash(touch team-file)`, 5*time.Second)
	// Esc interrupts the turn alice is in; she stays and takes the next line.
	p.submit("long-job")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.screen(), "Interrupted alice's turn") {
		if time.Now().After(deadline) {
			t.Fatalf("Esc did not interrupt alice's turn:\n%s", p.screen())
		}
		p.keys("Escape")
		time.Sleep(700 * time.Millisecond)
		if strings.Contains(p.screen(), "Ask the lead") { // she was not in a turn yet: Esc went back
			time.Sleep(2 * time.Second) // Esc again within 2 s would go back at once
			p.keys("Enter")             // she is still the selected teammate
			p.wait("Message alice", 5*time.Second)
		}
	}
	p.submit("ping-from-person")
	p.submit("/back") // Esc would interrupt the turn the line starts
	p.wait("alice: PONG-FROM-ALICE", 15*time.Second)

	p.quit()
	if _, err := os.Stat(filepath.Join(home, "teams", "tui-team")); !os.IsNotExist(err) {
		t.Errorf("the team is left behind after exit: %v", err)
	}
}

// --continue shows the conversation it continues, and /resume picks an
// earlier session from a list and opens it in place of the current one.
func TestTUIResume(t *testing.T) {
	dir := t.TempDir()
	script := `{"turns":[
 {"match":{"user":"first session"},"reply":{"text":"FIRST-ANSWER"}},
 {"match":{"user":"second session"},"reply":{"text":"SECOND-ANSWER"}},
 {"match":{"user":"after resume"},"reply":{"text":"RESUMED-ANSWER"}}
]}`
	scriptFile := filepath.Join(dir, "script.json")
	writeFile(t, scriptFile, script)
	env := []string{"TROUPE_HOME=" + filepath.Join(dir, "home"), "HOME=" + dir}
	args := []string{"--provider", "scripted", "--script", scriptFile}

	p := startTUI(t, dir, env, args...)
	p.submit("first session")
	p.wait("FIRST-ANSWER", 10*time.Second)
	p.quit()

	p = startTUI(t, dir, env, append(args, "--continue")...)
	s := p.wait("resumed", 5*time.Second)
	if !strings.Contains(s, "> first session") || !strings.Contains(s, "FIRST-ANSWER") {
		t.Errorf("--continue does not show the conversation:\n%s", s)
	}
	p.quit()

	p = startTUI(t, dir, env, args...)
	p.submit("second session")
	p.wait("SECOND-ANSWER", 10*time.Second)
	p.submit("/resume")
	s = p.wait("Resume a session", 5*time.Second)
	if !strings.Contains(s, "first session") || strings.Contains(s, "second session") {
		t.Errorf("/resume lists:\n%s", s)
	}
	p.keys("Enter")
	p.wait("FIRST-ANSWER", 10*time.Second)
	p.submit("after resume")
	p.wait("RESUMED-ANSWER", 10*time.Second)
	p.quit()
}

// /resume of a session whose record cannot be read says why and keeps
// the current session: it still answers, and quits normally.
func TestTUIResumeBroken(t *testing.T) {
	dir := t.TempDir()
	script := `{"turns":[
 {"match":{"user":"current session"},"reply":{"text":"CURRENT-ANSWER"}},
 {"match":{"user":"still here"},"reply":{"text":"STILL-HERE-ANSWER"}}
]}`
	scriptFile := filepath.Join(dir, "script.json")
	writeFile(t, scriptFile, script)
	home := filepath.Join(dir, "home")
	os.MkdirAll(filepath.Join(home, "sessions"), 0o700)
	writeFile(t, filepath.Join(home, "sessions", "broken-1.jsonl"),
		`{"type":"session","version":1,"session_id":"broken-1","cwd":"`+dir+`","provider":"scripted"}`+"\n"+
			`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"old"}]}}`+"\n"+
			"not json\n")
	p := startTUI(t, dir, []string{"TROUPE_HOME=" + home, "HOME=" + dir}, "--provider", "scripted", "--script", scriptFile)
	p.submit("current session")
	p.wait("CURRENT-ANSWER", 10*time.Second)
	p.submit("/resume")
	p.wait("broken-1", 5*time.Second)
	p.keys("Enter")
	s := p.wait("this session goes on", 10*time.Second)
	if !strings.Contains(s, "/resume broken-1:") || !strings.Contains(s, "line 3: not a JSON object") {
		t.Errorf("the failed /resume does not say why:\n%s", s)
	}
	p.submit("still here")
	p.wait("STILL-HERE-ANSWER", 10*time.Second)
	p.quit()
}

// The interactive lead on the official Anthropic SDK path (a fake
// Messages API with real SSE): the answer streams in parts, a tool call's
// question is answered, and Ctrl+O shows the call's result.
func TestTUIAnthropic(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, func(req *llmtest.AnthropicRequest) llmtest.AnthropicReply {
		switch {
		case bytes.Contains(req.Body, []byte("SDK-MARK-OUTPUT")):
			return llmtest.AnthropicText("SDK-DONE")
		case bytes.Contains(req.Body, []byte("RUN-SDK-TOOL")): // a mark no prompt or tool description holds
			return llmtest.AnthropicContent(llmtest.AnthropicToolUseBlock("toolu_1", "Bash", `{"command":"touch sdk-file && echo SDK-MARK-OUTPUT"}`))
		}
		return llmtest.AnthropicText("PART-ONE ", "PART-TWO ", "PART-THREE")
	})
	dir := t.TempDir()
	p := startTUI(t, dir, []string{"TROUPE_HOME=" + filepath.Join(dir, "home"), "HOME=" + dir, "ANTHROPIC_API_KEY=sk-test", "ANTHROPIC_BASE_URL=" + srv.URL})
	p.submit("hello")
	p.wait("PART-ONE PART-TWO PART-THREE", 15*time.Second)
	p.submit("RUN-SDK-TOOL")
	p.wait("team-lead asks: Bash", 15*time.Second)
	p.keys("1")
	s := p.wait("SDK-DONE", 15*time.Second)
	if !strings.Contains(s, "Bash(touch sdk-file && echo SDK-MARK-OUTPUT)  ⎿ SDK-MARK-OUTPUT") {
		t.Errorf("the call does not read as an action with its outcome:\n%s", s)
	}
	if strings.Contains(s, "$ touch sdk-file") {
		t.Errorf("the call's input shows before Ctrl+O:\n%s", s)
	}
	p.keys("C-o") // the input formatted as a command, not as JSON
	p.wait("$ touch sdk-file && echo SDK-MARK-OUTPUT", 5*time.Second)
	p.quit()
}
