package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/coordinator"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/task"
)

// coordinatorScratchpad returns the scratchpad a headless run in cwd with
// the test session id uses; the session's folder is removed at the end.
func coordinatorScratchpad(t *testing.T, cwd string) string {
	t.Helper()
	dir, err := task.OutputDir("", kit.ProjectSlug(cwd), "session-1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(dir)) })
	return filepath.Join(filepath.Dir(dir), "scratchpad")
}

// runSummary is what a coordinator test looks at in stream-json output.
type runSummary struct {
	lines          []map[string]any
	tools          []string // of the init line
	notes          []string // task notifications the lead got
	started, ended int
}

// runCoordinator runs troupe -p with the script file and args in dir,
// the coordinator's stream-json output summarized; it fails t when troupe
// fails.
func runCoordinator(t *testing.T, dir string, env map[string]string, script string, args ...string) (runSummary, string) {
	t.Helper()
	args = append([]string{"-p", "--trust", "--script", script, "--output-format", "stream-json"}, args...)
	out, err := headlessRun(t, dir, env, "", args...)
	if err != nil {
		t.Fatalf("troupe %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return summarize(t, out), out
}

// last is the last line of the output, nil when there is none.
func (s runSummary) last() map[string]any {
	if len(s.lines) == 0 {
		return nil
	}
	return s.lines[len(s.lines)-1]
}

func summarize(t *testing.T, out string) runSummary {
	t.Helper()
	var s runSummary
	s.lines = streamLines(t, out)
	for _, l := range s.lines {
		switch l["subtype"] {
		case "init":
			for _, n := range l["tools"].([]any) {
				s.tools = append(s.tools, n.(string))
			}
		case "task_started":
			s.started++
		case "task_terminated":
			s.ended++
		}
		if l["type"] != "user" {
			continue
		}
		msg, _ := l["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		for _, c := range content {
			if b, _ := c.(map[string]any); b["type"] == "text" && strings.Contains(b["text"].(string), "<task-notification>") {
				s.notes = append(s.notes, b["text"].(string))
			}
		}
	}
	return s
}

// The four phases with the scripted model: two research workers launched
// in one coordinator message, synthesis, an implementation worker that
// writes a file in the repo (and a research worker that writes to the
// scratchpad without a permission rule of its own), a fresh verification
// worker that reads it, and the implementation worker continued with
// SendMessage. The result comes after every worker has finished.
func TestCoordinatorPhases(t *testing.T) {
	dir := t.TempDir()
	scratch := coordinatorScratchpad(t, dir)
	notes := filepath.Join(scratch, "notes.md")
	m := coordinator.Marker
	script := writeScript(t, `{"turns": [
	  {"match": {"system": "sub-agent", "user": "RESEARCH-A"}, "reply": {"text": "FINDING-A: calc.go line 3 divides by zero", "delay_ms": 150}},
	  {"match": {"system": "sub-agent", "user": "RESEARCH-B", "turn": 0}, "reply": {"delay_ms": 500, "tool_calls": [
	    {"id": "toolu_note", "name": "Write", "input": {"file_path": "`+notes+`", "content": "NOTE-B\n"}}]}},
	  {"match": {"system": "sub-agent", "tool_result": "Write", "user": "notes.md"}, "reply": {"text": "FINDING-B: the caller never checks; noted in the scratchpad"}},
	  {"match": {"system": "sub-agent", "user": "CONTINUE-IMPL"}, "reply": {"text": "IMPL-SECOND-REPORT: fix.txt has 6 bytes"}},
	  {"match": {"system": "sub-agent", "user": "IMPLEMENT-FIX", "turn": 0}, "reply": {"tool_calls": [
	    {"id": "toolu_fix", "name": "Write", "input": {"file_path": "fix.txt", "content": "FIXED\n"}}]}},
	  {"match": {"system": "sub-agent", "tool_result": "Write", "user": "fix.txt"}, "reply": {"text": "IMPL-DONE: wrote fix.txt"}},
	  {"match": {"system": "sub-agent", "user": "VERIFY-FIX", "turn": 0}, "reply": {"tool_calls": [
	    {"id": "toolu_read", "name": "Read", "input": {"file_path": "fix.txt"}}]}},
	  {"match": {"system": "sub-agent", "tool_result": "Read", "user": "FIXED"}, "reply": {"text": "VERIFIED-OK"}},

	  {"match": {"system": "`+m+`", "turn": 0}, "reply": {"text": "Launching two researchers.", "tool_calls": [
	    {"id": "toolu_a", "name": "Agent", "input": {"description": "research A", "prompt": "RESEARCH-A: find the crash"}},
	    {"id": "toolu_b", "name": "Agent", "input": {"description": "research B", "prompt": "RESEARCH-B: find the caller"}}]}},
	  {"match": {"system": "`+m+`", "user": "IMPL-SECOND-REPORT"}, "reply": {"text": "COORDINATOR-FINAL: fixed and verified."}},
	  {"match": {"system": "`+m+`", "user": "VERIFIED-OK"}, "reply": {"text": "Asking the implementer for one more detail.", "tool_calls": [
	    {"id": "toolu_more", "name": "SendMessage", "input": {"to": "impl", "message": "CONTINUE-IMPL: report the size of fix.txt"}}]}},
	  {"match": {"system": "`+m+`", "user": "IMPL-DONE"}, "reply": {"text": "Launching a fresh verifier.", "tool_calls": [
	    {"id": "toolu_ver", "name": "Agent", "input": {"description": "verify fix", "prompt": "VERIFY-FIX: read fix.txt; it must hold FIXED."}}]}},
	  {"match": {"system": "`+m+`", "user": "FINDING-B"}, "reply": {"text": "Both reports are in; launching the fix.", "tool_calls": [
	    {"id": "toolu_impl", "name": "Agent", "input": {"description": "implement fix", "name": "impl", "prompt": "IMPLEMENT-FIX: calc.go line 3 divides by zero and the caller never checks. Write fix.txt containing FIXED. Done when fix.txt exists."}}]}},
	  {"match": {"system": "`+m+`", "user": "FINDING-A"}, "reply": {"text": "Research A is in; waiting for B."}},
	  {"match": {"system": "`+m+`", "tool_result": "SendMessage"}, "reply": {"text": "Implementer continued."}},
	  {"match": {"system": "`+m+`", "tool_result": "Agent"}, "reply": {"text": "Workers launched; waiting for their reports."}, "repeat": true}]}`)
	s, _ := runCoordinator(t, dir, nil, script, "--coordinator", "--permission-mode", "acceptEdits", "fix the crash")
	if want := coordinatorTools(); !slices.Equal(s.tools, want) {
		t.Errorf("coordinator tools = %v; want %v (no Read, Write or Bash)", s.tools, want)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "fix.txt")); err != nil || string(b) != "FIXED\n" {
		t.Errorf("fix.txt = %q, %v; want the implementation worker's file", b, err)
	}
	if b, err := os.ReadFile(notes); err != nil || string(b) != "NOTE-B\n" {
		t.Errorf("scratchpad notes = %q, %v; want the research worker's note", b, err)
	}
	all := strings.Join(s.notes, "\n")
	for _, w := range []string{"FINDING-A", "FINDING-B", "IMPL-DONE", "VERIFIED-OK", "IMPL-SECOND-REPORT"} {
		if !strings.Contains(all, w) {
			t.Errorf("the coordinator got no notification with %s; got (%d):\n%s", w, len(s.notes), all)
		}
	}
	if len(s.notes) != 5 {
		t.Errorf("notifications = %d; want 5 (two research, implementation, verification, continued implementation)", len(s.notes))
	}
	// Each worker's start and end is on the stream (the continued one
	// starts again).
	if s.started < 4 || s.started != s.ended {
		t.Errorf("task_started %d, task_terminated %d; want at least 4 each, as many ends as starts", s.started, s.ended)
	}
	last := s.last()
	if last["type"] != "result" || last["subtype"] != "success" || last["result"] != "COORDINATOR-FINAL: fixed and verified." {
		t.Errorf("last line = %v; want the coordinator's final result after every worker", last)
	}
}

// A worker stopped with TaskStop is continued with SendMessage; coordinator
// mode is on by TROUPE_COORDINATOR_MODE, and in the default permission
// mode the coordinator's own tools need no rule.
func TestCoordinatorStopAndContinue(t *testing.T) {
	dir := t.TempDir()
	coordinatorScratchpad(t, dir)
	m := coordinator.Marker
	script := writeScript(t, `{"turns": [
	  {"match": {"system": "sub-agent", "user": "RESUME-SLOW"}, "reply": {"text": "SLOW-RESUMED-DONE"}},
	  {"match": {"system": "sub-agent", "user": "SLOW-JOB"}, "reply": {"text": "never seen", "delay_ms": 60000}},
	  {"match": {"system": "`+m+`", "turn": 0}, "reply": {"text": "Starting a worker.", "tool_calls": [
	    {"id": "toolu_slow", "name": "Agent", "input": {"description": "slow job", "name": "slow", "prompt": "SLOW-JOB: take the long way"}}]}},
	  {"match": {"system": "`+m+`", "user": "SLOW-RESUMED-DONE"}, "reply": {"text": "STOP-CONTINUE-FINAL"}},
	  {"match": {"system": "`+m+`", "tool_result": "Agent"}, "reply": {"text": "It is going the wrong way; stopping it.", "tool_calls": [
	    {"id": "toolu_stop", "name": "TaskStop", "input": {"task_id": "slow"}}]}},
	  {"match": {"system": "`+m+`", "tool_result": "TaskStop"}, "reply": {"text": "Stopped; continuing it the short way.", "tool_calls": [
	    {"id": "toolu_resume", "name": "SendMessage", "input": {"to": "slow", "message": "RESUME-SLOW: take the short way"}}]}},
	  {"match": {"system": "`+m+`", "tool_result": "SendMessage"}, "reply": {"text": "Continued the worker."}}]}`)
	env := map[string]string{coordinator.EnvMode: "1"}
	s, out := runCoordinator(t, dir, env, script, "do the job")
	if !slices.Equal(s.tools, coordinatorTools()) {
		t.Errorf("coordinator tools = %v; want %v", s.tools, coordinatorTools())
	}
	// A worker the coordinator stopped ends without a notification (the
	// stream shows it killed); the continued run notifies once.
	if len(s.notes) != 1 || !strings.Contains(s.notes[0], "SLOW-RESUMED-DONE") {
		t.Errorf("notifications (%d):\n%s\nwant one, with the continued run's result", len(s.notes), strings.Join(s.notes, "\n"))
	}
	if !strings.Contains(out, `"subtype":"task_terminated"`) || !strings.Contains(out, `"status":"killed"`) || s.started != 2 || s.ended != 2 {
		t.Errorf("task events: %d started, %d ended, killed shown: %v; want 2, 2, true", s.started, s.ended, strings.Contains(out, `"status":"killed"`))
	}
	last := s.last()
	if last["result"] != "STOP-CONTINUE-FINAL" {
		t.Errorf("last line = %v; want the final result after the continued worker", last)
	}
}

// Sub-agent turns of the claims tests: worker B (prompt EDIT-B) waits
// for shared.txt and then edits it (the test scripts what it does with
// the refusal); worker C (prompt EDIT-C) edits it and reports C-DONE.
const (
	claimsEditB = `	  {"match": {"system": "sub-agent", "user": "EDIT-B", "turn": 0}, "reply": {"tool_calls": [
	    {"id": "toolu_bwait", "name": "Bash", "input": {"command": "timeout 30 sh -c 'until [ -f shared.txt ]; do sleep 0.05; done'; echo SHARED-EXISTS"}}]}},
	  {"match": {"system": "sub-agent", "tool_result": "Bash", "user": "SHARED-EXISTS"}, "reply": {"tool_calls": [
	    {"id": "toolu_eb", "name": "Edit", "input": {"file_path": "shared.txt", "old_string": "A", "new_string": "B"}}]}},`
	claimsEditC = `	  {"match": {"system": "sub-agent", "user": "EDIT-C", "turn": 0}, "reply": {"tool_calls": [
	    {"id": "toolu_ec", "name": "Edit", "input": {"file_path": "shared.txt", "old_string": "A", "new_string": "C"}}]}},
	  {"match": {"system": "sub-agent", "tool_result": "Edit", "user": "Edited"}, "reply": {"text": "C-DONE"}},`
)

// One writer per file: worker "a" writes shared.txt and waits; worker "b"
// (started beside it) waits for the file, and its Edit of it is refused
// with a message naming "a" by its description (the script only answers
// b's next turn when the refusal says so); b then writes a marker file
// that lets a finish. Once a has ended, a third worker's Edit of
// shared.txt succeeds.
func TestCoordinatorWriteClaims(t *testing.T) {
	dir := t.TempDir()
	coordinatorScratchpad(t, dir)
	m := coordinator.Marker
	script := writeScript(t, `{"turns": [
	  {"match": {"system": "sub-agent", "user": "EDIT-A", "turn": 0}, "reply": {"tool_calls": [
	    {"id": "toolu_wa", "name": "Write", "input": {"file_path": "shared.txt", "content": "A\n"}}]}},
	  {"match": {"system": "sub-agent", "tool_result": "Write", "user": "Created"}, "reply": {"tool_calls": [
	    {"id": "toolu_wait", "name": "Bash", "input": {"command": "timeout 30 sh -c 'until [ -f b-tried ]; do sleep 0.05; done'; echo B-TRIED-SEEN"}}]}},
	  {"match": {"system": "sub-agent", "tool_result": "Bash", "user": "B-TRIED-SEEN"}, "reply": {"text": "A-DONE"}},

`+claimsEditB+`
	  {"match": {"system": "sub-agent", "tool_result": "Edit", "user": "(\"edit shared A\"); only one worker may write"}, "reply": {"tool_calls": [
	    {"id": "toolu_mark", "name": "Write", "input": {"file_path": "b-tried", "content": "x"}}]}},
	  {"match": {"system": "sub-agent", "tool_result": "Write", "user": "b-tried"}, "reply": {"text": "B-REFUSED"}},

`+claimsEditC+`

	  {"match": {"system": "`+m+`", "turn": 0}, "reply": {"text": "Two writers.", "tool_calls": [
	    {"id": "toolu_a", "name": "Agent", "input": {"description": "edit shared A", "name": "a", "prompt": "EDIT-A"}},
	    {"id": "toolu_b", "name": "Agent", "input": {"description": "edit shared B", "name": "b", "prompt": "EDIT-B"}}]}},
	  {"match": {"system": "`+m+`", "user": "C-DONE"}, "reply": {"text": "CLAIMS-FINAL"}},
	  {"match": {"system": "`+m+`", "user": "A-DONE"}, "reply": {"text": "A is done; C takes over.", "tool_calls": [
	    {"id": "toolu_c", "name": "Agent", "input": {"description": "edit shared C", "prompt": "EDIT-C"}}]}},
	  {"match": {"system": "`+m+`"}, "reply": {"text": "Waiting."}, "repeat": true}]}`)
	s, _ := runCoordinator(t, dir, nil, script, "--coordinator", "--permission-mode", "bypassPermissions", "edit shared.txt")
	all := strings.Join(s.notes, "\n")
	for _, w := range []string{"A-DONE", "B-REFUSED", "C-DONE"} {
		if !strings.Contains(all, w) {
			t.Errorf("no notification with %s; got (%d):\n%s", w, len(s.notes), all)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "shared.txt")); err != nil || string(b) != "C\n" {
		t.Errorf("shared.txt = %q, %v; want a's file edited by the third worker only", b, err)
	}
	if last := s.last(); last["result"] != "CLAIMS-FINAL" {
		t.Errorf("last line = %v; want CLAIMS-FINAL", last)
	}
}

// A killed worker's claims go with it: "a" writes shared.txt and hangs;
// "b"'s Edit is refused naming a; the coordinator stops a with TaskStop,
// and a worker it starts then edits the file.
func TestCoordinatorClaimsKilledWorker(t *testing.T) {
	dir := t.TempDir()
	coordinatorScratchpad(t, dir)
	m := coordinator.Marker
	script := writeScript(t, `{"turns": [
	  {"match": {"system": "sub-agent", "user": "EDIT-A", "turn": 0}, "reply": {"tool_calls": [
	    {"id": "toolu_wa", "name": "Write", "input": {"file_path": "shared.txt", "content": "A\n"}}]}},
	  {"match": {"system": "sub-agent", "tool_result": "Write", "user": "Created"}, "reply": {"text": "never seen", "delay_ms": 60000}},

`+claimsEditB+`
	  {"match": {"system": "sub-agent", "tool_result": "Edit", "user": "shared.txt is being edited by worker a"}, "reply": {"text": "B-REFUSED"}},

`+claimsEditC+`

	  {"match": {"system": "`+m+`", "turn": 0}, "reply": {"text": "Two writers.", "tool_calls": [
	    {"id": "toolu_a", "name": "Agent", "input": {"description": "edit shared A", "name": "a", "prompt": "EDIT-A"}},
	    {"id": "toolu_b", "name": "Agent", "input": {"description": "edit shared B", "name": "b", "prompt": "EDIT-B"}}]}},
	  {"match": {"system": "`+m+`", "user": "C-DONE"}, "reply": {"text": "KILLED-CLAIMS-FINAL"}},
	  {"match": {"system": "`+m+`", "user": "B-REFUSED"}, "reply": {"text": "a is stuck; stopping it.", "tool_calls": [
	    {"id": "toolu_stop", "name": "TaskStop", "input": {"task_id": "a"}}]}},
	  {"match": {"system": "`+m+`", "tool_result": "TaskStop"}, "reply": {"text": "Stopped; C takes over.", "tool_calls": [
	    {"id": "toolu_c", "name": "Agent", "input": {"description": "edit shared C", "prompt": "EDIT-C"}}]}},
	  {"match": {"system": "`+m+`"}, "reply": {"text": "Waiting."}, "repeat": true}]}`)
	s, _ := runCoordinator(t, dir, nil, script, "--coordinator", "--permission-mode", "bypassPermissions", "edit shared.txt")
	all := strings.Join(s.notes, "\n")
	if !strings.Contains(all, "B-REFUSED") || !strings.Contains(all, "C-DONE") {
		t.Errorf("notifications (%d):\n%s\nwant B-REFUSED and C-DONE", len(s.notes), all)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "shared.txt")); err != nil || string(b) != "C\n" {
		t.Errorf("shared.txt = %q, %v; want the killed worker's file edited by the third worker", b, err)
	}
	if last := s.last(); last["result"] != "KILLED-CLAIMS-FINAL" {
		t.Errorf("last line = %v; want KILLED-CLAIMS-FINAL", last)
	}
}

// A foreground worker (run_in_background false) has no task: its claims
// go when its Agent call returns, so a background worker started next
// edits the file it wrote.
func TestCoordinatorForegroundWorkerClaims(t *testing.T) {
	dir := t.TempDir()
	coordinatorScratchpad(t, dir)
	m := coordinator.Marker
	script := writeScript(t, `{"turns": [
	  {"match": {"system": "sub-agent", "user": "EDIT-FG", "turn": 0}, "reply": {"tool_calls": [
	    {"id": "toolu_wfg", "name": "Write", "input": {"file_path": "shared.txt", "content": "FG\n"}}]}},
	  {"match": {"system": "sub-agent", "tool_result": "Write", "user": "Created"}, "reply": {"text": "FG-DONE"}},
	  {"match": {"system": "sub-agent", "user": "EDIT-BG", "turn": 0}, "reply": {"tool_calls": [
	    {"id": "toolu_ebg", "name": "Edit", "input": {"file_path": "shared.txt", "old_string": "FG", "new_string": "BG"}}]}},
	  {"match": {"system": "sub-agent", "tool_result": "Edit", "user": "Edited"}, "reply": {"text": "BG-DONE"}},
	  {"match": {"system": "`+m+`", "turn": 0}, "reply": {"tool_calls": [
	    {"id": "toolu_fg", "name": "Agent", "input": {"description": "edit in front", "prompt": "EDIT-FG", "run_in_background": false}}]}},
	  {"match": {"system": "`+m+`", "tool_result": "Agent", "user": "FG-DONE"}, "reply": {"tool_calls": [
	    {"id": "toolu_bg", "name": "Agent", "input": {"description": "edit behind", "prompt": "EDIT-BG"}}]}},
	  {"match": {"system": "`+m+`", "user": "BG-DONE"}, "reply": {"text": "FG-BG-FINAL"}},
	  {"match": {"system": "`+m+`", "tool_result": "Agent"}, "reply": {"text": "Waiting."}}]}`)
	s, _ := runCoordinator(t, dir, nil, script, "--coordinator", "--permission-mode", "acceptEdits", "edit shared.txt twice")
	if b, err := os.ReadFile(filepath.Join(dir, "shared.txt")); err != nil || string(b) != "BG\n" {
		t.Errorf("shared.txt = %q, %v; want the foreground worker's file edited by the background one\n%s", b, err, strings.Join(s.notes, "\n"))
	}
	if last := s.last(); last["result"] != "FG-BG-FINAL" {
		t.Errorf("last line = %v; want FG-BG-FINAL", last)
	}
}

// coordinatorTools are a coordinator's tools: coordinator.LeadTools, with
// ListAgents after SendMessage (peers.go: other sessions are reachable).
func coordinatorTools() []string {
	var out []string
	for _, n := range coordinator.LeadTools {
		out = append(out, n)
		if n == "SendMessage" {
			out = append(out, "ListAgents")
		}
	}
	return out
}
