package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// userTexts returns the text blocks of the stream-json user messages.
func userTexts(t *testing.T, out string) string {
	t.Helper()
	var b strings.Builder
	for _, l := range streamLines(t, out) {
		if l["type"] != "user" {
			continue
		}
		msg, _ := l["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		for _, c := range content {
			if bl, _ := c.(map[string]any); bl["type"] == "text" {
				s, _ := bl["text"].(string)
				b.WriteString(s + "\n")
			}
		}
	}
	return b.String()
}

// A monitor started by an in-process teammate on a shell wakes it, idle,
// when the shell prints a matching line; the teammate reports to the lead,
// which asks it to shut down. The lead stays up on a background sleep of
// its own (an idle teammate's monitor does not keep the team busy).
func TestMonitorWakesIdleInProcessTeammate(t *testing.T) {
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"watch"}},
   {"name":"Agent","input":{"description":"watcher","name":"ann","prompt":"watch the build"}},
   {"name":"Bash","input":{"command":"sleep 6","run_in_background":true,"description":"keep the lead up"}}]}},
 {"match":{"system":"You are troupe,","user":"MONITOR-SAW-FAILURE"},"reply":{"tool_calls":[
   {"name":"SendMessage","input":{"to":"ann","message":{"type":"shutdown_request","reason":"done"}}}]}},
 {"match":{"system":"You are troupe,"},"reply":{"text":"noted"},"repeat":true},
 {"match":{"system":"You are teammate","user":"shutdown_request"},"reply":{"tool_calls":[
   {"name":"SendMessage","input":{"to":"team-lead","message":{"type":"shutdown_response","request_id":"{{capture:\"request_id\": \"(shutdown-[^\"]+)\"}}","approve":true}}}]},"repeat":true},
 {"match":{"system":"You are teammate","user":"watch the build"},"reply":{"tool_calls":[
   {"name":"Monitor","input":{"command":"echo compiling; sleep 1; echo 'BUILD FAILED: x.go:3'; sleep 30","filter":"FAILED","batch_ms":200,"description":"the build"}}]}},
 {"match":{"system":"You are teammate","tool_result":"Monitor"},"reply":{"text":"watching"}},
 {"match":{"system":"You are teammate","user":"BUILD FAILED: x.go:3"},"reply":{"tool_calls":[
   {"name":"SendMessage","input":{"to":"team-lead","message":"MONITOR-SAW-FAILURE","summary":"build failed"}}]}},
 {"match":{"system":"You are teammate"},"reply":{"text":"ok"},"repeat":true}
]}`)
	out, errOut, err := runIn(t, home, "-p", "--agent-teams", "--explicit-teams", "--teammate-mode", "in-process", "--cwd", cwd,
		"--permission-mode", "bypassPermissions", "--provider", "scripted", "--script", script, "--output-format", "stream-json", "go")
	if err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, out, errOut)
	}
	if got := userTexts(t, out); !strings.Contains(got, "MONITOR-SAW-FAILURE") {
		t.Fatalf("the lead never heard from the woken teammate; its input:\n%s\nstderr:\n%s", got, errOut)
	}
}

// A headless lead's monitor wakes it with the command's lines (a
// task_monitor stream-json event and a notification in its input); the
// command's end ends the monitor, and the run ends after that.
func TestHeadlessLeadMonitor(t *testing.T) {
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"turn":0},"reply":{"tool_calls":[
   {"name":"Monitor","input":{"command":"sleep 0.5; echo SERVER-READY; sleep 1; exit 2","batch_ms":100,"description":"dev server"}}]}},
 {"match":{"tool_result":"Monitor"},"reply":{"text":"watching"}},
 {"match":{"user":"SERVER-READY"},"reply":{"text":"SAW-READY"}},
 {"match":{"user":"exited with code 2"},"reply":{"text":"SAW-EXIT"}},
 {"reply":{"text":"other"},"repeat":true}
]}`)
	out, errOut, err := runIn(t, home, "-p", "--cwd", cwd, "--permission-mode", "bypassPermissions", "--provider", "scripted",
		"--script", script, "--output-format", "stream-json", "go")
	if err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, out, errOut)
	}
	subtypes := map[string]int{}
	for _, l := range streamLines(t, out) {
		if st, _ := l["subtype"].(string); st != "" {
			subtypes[st]++
		}
	}
	if subtypes["task_monitor"] != 1 {
		t.Errorf("stream-json subtypes %v; want one task_monitor", subtypes)
	}
	got := userTexts(t, out)
	if !strings.Contains(got, "<task-type>monitor_mcp</task-type>") || !strings.Contains(got, "SERVER-READY") || !strings.Contains(got, "exited with code 2") {
		t.Errorf("the lead's input:\n%s", got)
	}
	if !strings.Contains(out, `"result":"SAW-EXIT"`) {
		t.Errorf("the run did not end on the monitor's end:\n%s", out)
	}
}

// A pane teammate (its own troupe process in a real tmux pane) whose
// background `sleep 2; false` fails is woken with the notification after
// its turn ended, and tells the lead it failed.
func TestPaneTeammateWokenByItsShell(t *testing.T) {
	needTmux(t)
	sock := tmuxSocket(t)
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"panes"}},
   {"name":"Agent","input":{"description":"builder","name":"pat","prompt":"run the slow check"}}]}},
 {"match":{"system":"You are troupe,","user":"PANE-SAW-FAIL"},"reply":{"tool_calls":[
   {"name":"SendMessage","input":{"to":"pat","message":{"type":"shutdown_request","reason":"done"}}}]}},
 {"match":{"system":"You are troupe,"},"reply":{"text":"noted"},"repeat":true},
 {"match":{"system":"You are teammate","user":"shutdown_request"},"reply":{"tool_calls":[
   {"name":"SendMessage","input":{"to":"team-lead","message":{"type":"shutdown_response","request_id":"{{capture:\"request_id\": \"(shutdown-[^\"]+)\"}}","approve":true}}}]},"repeat":true},
 {"match":{"system":"You are teammate","user":"run the slow check"},"reply":{"tool_calls":[
   {"name":"Bash","input":{"command":"sleep 2; false","run_in_background":true,"description":"slow check"}}]}},
 {"match":{"system":"You are teammate","tool_result":"Bash"},"reply":{"text":"started; waiting"}},
 {"match":{"system":"You are teammate","user":"failed with exit code 1"},"reply":{"tool_calls":[
   {"name":"SendMessage","input":{"to":"team-lead","message":"PANE-SAW-FAIL: the slow check failed","summary":"check failed"}}]}},
 {"match":{"system":"You are teammate"},"reply":{"text":"ok"},"repeat":true}
]}`)
	c := exec.CommandContext(t.Context(), os.Args[0], "-p", "--trust", "--agent-teams", "--explicit-teams", "--teammate-mode", "tmux", "--home", home,
		"--permission-mode", "bypassPermissions", "--provider", "scripted", "--script", script, "--cwd", cwd, "--output-format", "stream-json", "go")
	c.Env = troupeEnv(t, sock)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the lead failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
		}
	case <-time.After(90 * time.Second):
		_ = c.Process.Kill()
		<-done
		t.Fatalf("the run did not end\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	if got := userTexts(t, stdout.String()); !strings.Contains(got, "PANE-SAW-FAIL: the slow check failed") {
		t.Errorf("the lead never heard the woken pane teammate; its input:\n%s\nstderr:\n%s", got, stderr.String())
	}
}

// A running background sub-agent's background shell reports to that
// sub-agent (at its next tool round), not to the lead; the lead gets the
// sub-agent's result. The same for a coordinator's worker.
func TestSubAgentShellReportsToSubAgent(t *testing.T) {
	for _, coord := range []bool{false, true} {
		t.Run(map[bool]string{false: "lead", true: "coordinator"}[coord], func(t *testing.T) {
			dir := t.TempDir()
			home, cwd := homeAndWork(t, dir)
			script := filepath.Join(dir, "script.json")
			writeFile(t, script, `{"turns":[
 {"match":{"system":"sub-agent","user":"run the check"},"reply":{"tool_calls":[
   {"name":"Bash","input":{"command":"sleep 1; echo CHECK-DONE","run_in_background":true,"description":"the check"}},
   {"name":"Bash","input":{"command":"sleep 4","description":"wait"}}]}},
 {"match":{"system":"sub-agent","user":"CHECK-DONE"},"reply":{"text":"WORKER-SAW-CHECK"}},
 {"match":{"system":"sub-agent"},"reply":{"text":"WORKER-MISSED-IT"},"repeat":true},
 {"match":{"turn":0},"reply":{"tool_calls":[
   {"name":"Agent","input":{"description":"checker","prompt":"run the check","run_in_background":true}}]}},
 {"match":{"tool_result":"Agent"},"reply":{"text":"waiting"}},
 {"match":{"user":"WORKER-SAW-CHECK"},"reply":{"text":"LEAD-DONE"}},
 {"reply":{"text":"other"},"repeat":true}
]}`)
			args := []string{"-p", "--cwd", cwd, "--permission-mode", "bypassPermissions", "--provider", "scripted",
				"--script", script, "--output-format", "stream-json", "go"}
			if coord {
				args = append([]string{"--coordinator"}, args...)
			}
			out, errOut, err := runIn(t, home, args...)
			if err != nil {
				t.Fatalf("run: %v\n%s\n%s", err, out, errOut)
			}
			got := userTexts(t, out)
			if strings.Contains(got, "<task-type>local_bash</task-type>") {
				t.Errorf("the sub-agent's shell reported to the lead:\n%s", got)
			}
			if !strings.Contains(out, `"result":"LEAD-DONE"`) {
				t.Errorf("the sub-agent did not see its shell's end:\n%s", out)
			}
		})
	}
}

// A running background shell's new output reaches the lead's next model
// input without TaskOutput (a <task-output> note with its id), and the
// setting taskOutputInContext: false keeps it out.
func TestRunningOutputInContext(t *testing.T) {
	for _, off := range []bool{false, true} {
		t.Run(map[bool]string{false: "on", true: "off"}[off], func(t *testing.T) {
			dir := t.TempDir()
			home, cwd := homeAndWork(t, dir)
			if off {
				writeIn(t, filepath.Join(cwd, ".troupe", "settings.json"), `{"taskOutputInContext": false}`)
			}
			script := filepath.Join(dir, "script.json")
			writeFile(t, script, `{"turns":[
 {"match":{"turn":0},"reply":{"tool_calls":[
   {"name":"Bash","input":{"command":"echo PROGRESS-LINE-1; sleep 3","run_in_background":true,"description":"slow job"}}]}},
 {"match":{"turn":1},"reply":{"tool_calls":[
   {"name":"Bash","input":{"command":"sleep 1","description":"wait"}}]}},
 {"reply":{"text":"done"},"repeat":true}
]}`)
			out, errOut, err := runIn(t, home, "-p", "--trust", "--cwd", cwd, "--permission-mode", "bypassPermissions", "--provider", "scripted",
				"--script", script, "--output-format", "stream-json", "go")
			if err != nil {
				t.Fatalf("run: %v\n%s\n%s", err, out, errOut)
			}
			got := userTexts(t, out)
			note := strings.Contains(got, "<task-output>") && strings.Contains(got, "<new-output>PROGRESS-LINE-1</new-output>")
			if note == off {
				t.Errorf("running output in the lead's input: %v, want %v:\n%s", note, !off, got)
			}
		})
	}
}
