package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/cli/mate"
	"github.com/troupe-dev/troupe/llm/llmtest"
)

// streamedLines is an answer of n lines streamed one line per event, an
// event every d (the fake Anthropic API through the official SDK).
func streamedLines(n int, d time.Duration) llmtest.AnthropicResponse {
	var deltas []string
	for i := range n {
		deltas = append(deltas, fmt.Sprintf("stream line %03d\n", i))
	}
	r := llmtest.AnthropicText(deltas...)
	r.EventDelay = d
	return r
}

// While an answer streams: PgUp holds the view still (its top line does
// not move as lines arrive) and says how many new lines came; G (the
// prompt is empty) follows the end again; Ctrl+C cancels the answer, and
// the session goes on.
func TestTUIStreamScrollAndCtrlC(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, func(req *llmtest.AnthropicRequest) llmtest.AnthropicReply {
		if strings.Contains(string(req.Body), "AFTER-CANCEL") {
			return llmtest.AnthropicText("STILL-HERE")
		}
		return streamedLines(400, 60*time.Millisecond)
	})
	dir := t.TempDir()
	p := startTUISize(t, 80, 24, dir, []string{"TROUPE_HOME=" + filepath.Join(dir, "home"), "HOME=" + dir, "ANTHROPIC_API_KEY=sk-test", "ANTHROPIC_BASE_URL=" + srv.URL})
	p.submit("stream it")
	p.wait("stream line 030", 20*time.Second)
	p.keys("PgUp")
	s := p.wait("End to follow", 5*time.Second)
	top := strings.Split(s, "\n")[0]
	if strings.TrimSpace(top) == "" {
		t.Fatalf("the view's top line is empty after PgUp:\n%s", s)
	}
	// Wait until at least 10 more lines have streamed below the view
	// (the marker counts them), not for a fixed time.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		s = p.screen()
		if n := newLinesMarked(s); n >= 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the marker never counted 10 new lines:\n%s", s)
		}
	}
	if got := strings.Split(s, "\n")[0]; got != top {
		t.Errorf("the top line moved while scrolled back: %q, was %q\n%s", got, top, s)
	}
	p.keys("G")
	deadline := time.Now().Add(5 * time.Second)
	for strings.Contains(p.screen(), "End to follow") {
		if time.Now().After(deadline) {
			t.Fatalf("G did not follow the end:\n%s", p.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.keys("C-c")
	s = p.wait("Interrupted", 10*time.Second)
	if strings.Contains(s, "stream line 399") {
		t.Fatalf("the answer streamed to its end: Ctrl+C did not cancel it\n%s", s)
	}
	if strings.Contains(s, "EXITED") {
		t.Fatalf("Ctrl+C during a stream quit:\n%s", s)
	}
	p.submit("AFTER-CANCEL")
	p.wait("STILL-HERE", 15*time.Second)
	p.quit()
}

// In a teammate's view, "is it safe?" (an i, an s, a ?) reaches the
// teammate whole, at its next tool round, without interrupting the turn
// it is in; and the task board (Ctrl+T) shows the task it claimed.
func TestTUITeammateTypingAndBoard(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "notes.txt"), "some notes\n")
	script := `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"text":"Forming the team.","tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"keys-team","description":"test the keys"}},
   {"name":"TaskCreate","input":{"subject":"Build the widget","description":"The widget needs **three** parts."}},
   {"name":"Agent","input":{"description":"first","name":"alice","prompt":"claim task 1 and read notes.txt"}}]}},
 {"match":{"system":"You are troupe,"},"reply":{"text":"Noted."},"repeat":true},
 {"match":{"system":"You are teammate","user":"shutdown_request"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","message":{"type":"shutdown_response","request_id":"{{capture:\"request_id\": \"(shutdown-[^\"]+)\"}}","approve":true}}}]},"repeat":true},
 {"match":{"system":"You are teammate alice","turn":0},"reply":{"tool_calls":[{"name":"TaskUpdate","input":{"taskId":"1","status":"in_progress","owner":"alice"}}]}},
 {"match":{"system":"You are teammate alice","tool_result":"TaskUpdate"},"reply":{"delay_ms":4000,"tool_calls":[{"name":"Read","input":{"file_path":"notes.txt"}}]}},
 {"match":{"system":"You are teammate alice","user":"is it safe?"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","summary":"heard","message":"ALICE-HEARD-THE-QUESTION"}}]}},
 {"match":{"system":"You are teammate alice","tool_result":"Read"},"reply":{"text":"ALICE-READ-WITHOUT-THE-QUESTION"}},
 {"match":{"system":"You are teammate"},"reply":{"text":"Waiting."},"repeat":true}
]}`
	scriptFile := filepath.Join(dir, "script.json")
	writeFile(t, scriptFile, script)
	home := filepath.Join(dir, "home")
	p := startTUISize(t, 80, 24, dir, []string{"TROUPE_HOME=" + home, "HOME=" + dir, mate.EnvAgentTeams + "=1"},
		"--provider", "scripted", "--script", scriptFile, "--teammate-mode", "in-process", "--explicit-teams", "--shutdown-answer-timeout", "10s")

	p.submit("form a team")
	p.wait("alice", 20*time.Second)
	p.keys("S-Down")
	p.keys("Enter")
	p.wait("Message alice", 5*time.Second)
	p.text("is it safe?")
	p.wait("> is it safe?", 5*time.Second)
	p.keys("Enter")
	// Her view shows the line as she got it, then her answer to it.
	s := p.wait("SendMessage(team-lead)", 20*time.Second)
	if !strings.Contains(s, "team-lead: is it safe?") || strings.Contains(s, "Interrupted alice") {
		t.Errorf("the line did not reach alice whole, or interrupted her turn:\n%s", s)
	}
	p.submit("/back")
	s = p.wait("alice: ALICE-HEARD-THE-QUESTION", 20*time.Second)

	p.keys("C-t")
	p.wait("Task board", 5*time.Second)
	s = p.wait("in_progress alice", 10*time.Second)
	if !strings.Contains(s, "Build the widget") {
		t.Errorf("the board does not show the task's subject:\n%s", s)
	}
	p.keys("Enter")
	p.wait("The widget needs three parts.", 5*time.Second)
	// One Escape at a time: two sent together read as Alt+Escape.
	p.keys("Escape")
	p.wait("Enter opens a task", 5*time.Second)
	p.keys("Escape")
	p.wait("Ask the lead", 5*time.Second)
	p.quit()
}

// An Edit's dialog in the real terminal: the diff against the file on
// disk with its line numbers, the path relative to the working folder;
// once allowed, the call reads as an action with its outcome.
func TestTUIEditDiff(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "line %02d\n", i)
	}
	writeFile(t, filepath.Join(dir, "calc.go"), b.String())
	in := fmt.Sprintf(`{"file_path":%q,"old_string":"line 15\n","new_string":"line fifteen\nline 15b\n"}`, filepath.Join(dir, "calc.go"))
	script := `{"turns":[
 {"match":{"user":"edit it"},"reply":{"tool_calls":[{"name":"Edit","input":` + in + `}]}},
 {"match":{"tool_result":"Edit"},"reply":{"text":"EDITED-IT"}}
]}`
	scriptFile := filepath.Join(dir, "script.json")
	writeFile(t, scriptFile, script)
	p := startTUISize(t, 80, 24, dir, []string{"TROUPE_HOME=" + filepath.Join(dir, "home"), "HOME=" + dir}, "--provider", "scripted", "--script", scriptFile)
	p.submit("edit it")
	p.wait("team-lead asks: Edit", 10*time.Second)
	s := p.wait("+2 −1, with 3 lines of context", 5*time.Second)
	for _, want := range []string{"update calc.go", "12   line 12", "15 - line 15", "15 + line fifteen", "16 + line 15b", "16   line 16"} {
		if !strings.Contains(s, want) {
			t.Errorf("the dialog lacks %q:\n%s", want, s)
		}
	}
	p.keys("1")
	s = p.wait("EDITED-IT", 10*time.Second)
	if !strings.Contains(s, "Update(calc.go)  ⎿ +2 −1") {
		t.Errorf("the call does not read as Update(calc.go)  ⎿ +2 −1:\n%s", s)
	}
	p.quit()
}

// newLinesMarked returns N of the held view's "N new lines, End to
// follow" marker on screen s, 0 without one.
func newLinesMarked(s string) int {
	i := strings.Index(s, " new lines, End to follow")
	if i < 0 {
		return 0
	}
	j := i
	for j > 0 && s[j-1] >= '0' && s[j-1] <= '9' {
		j--
	}
	n, _ := strconv.Atoi(s[j:i])
	return n
}
