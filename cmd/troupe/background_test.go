package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/task"
)

// A headless run whose lead starts a background shell and a background
// sub-agent keeps running until both have finished, and the lead gets both
// notifications (docs/protocol.md section 11) before the final result.
func TestHeadlessBackgroundShellAndAgent(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(t.TempDir(), "script.json")
	// The notifications may come with the tool results (fast tasks reach
	// the first tool-round boundary) or after: either way the last answer
	// is to a notification.
	os.WriteFile(script, []byte(`{"turns": [
	  {"match": {"system": "sub-agent"}, "reply": {"text": "SUB-RESULT-42"}},
	  {"match": {"turn": 0}, "reply": {"text": "Starting both.", "tool_calls": [
	    {"id": "toolu_sh", "name": "Bash", "input": {"command": "echo BG-SHELL-OUTPUT", "run_in_background": true, "description": "print a line"}},
	    {"id": "toolu_ag", "name": "Agent", "input": {"description": "find the answer", "prompt": "find the answer", "run_in_background": true}}]}},
	  {"match": {"user": "task-notification"}, "reply": {"text": "Noted a finished task."}, "repeat": true},
	  {"match": {"tool_result": "Agent"}, "reply": {"text": "Both are running."}}]}`), 0o644)
	out, err := headlessRun(t, dir, nil, "", "-p", "--trust", "--script", script, "--permission-mode", "bypassPermissions",
		"--output-format", "stream-json", "start the work")
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out)
	}
	lines := streamLines(t, out)
	count := map[string]int{}
	var notes []string
	for _, l := range lines {
		if st, _ := l["subtype"].(string); st != "" {
			count[st]++
		}
		if l["type"] != "user" {
			continue
		}
		msg, _ := l["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		for _, c := range content {
			if b, _ := c.(map[string]any); b["type"] == "text" && strings.Contains(b["text"].(string), "<task-notification>") {
				notes = append(notes, b["text"].(string))
			}
		}
	}
	if count["task_started"] != 2 || count["task_terminated"] != 2 {
		t.Errorf("task events = %v; want 2 task_started and 2 task_terminated", count)
	}
	all := strings.Join(notes, "\n")
	if len(notes) != 2 || !strings.Contains(all, "SUB-RESULT-42") || !strings.Contains(all, "<task-type>local_bash</task-type>") ||
		!strings.Contains(all, "NOT USER INPUT") {
		t.Errorf("notifications the lead got (%d):\n%s\nwant the shell's and the sub-agent's (with its result), marked as not user input", len(notes), all)
	}
	last := lines[len(lines)-1]
	if last["type"] != "result" || last["subtype"] != "success" || last["result"] != "Noted a finished task." {
		t.Errorf("last line = %v; want the result after the notifications", last)
	}
}

// The taskOutputRetentionDays setting decides which sessions' task
// outputs go at start; a bad value is named and the default used.
func TestSweepTaskOutputsSetting(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct {
		name, setting string
		age           time.Duration // of the old session's folder
		gone          bool
		warn          string
	}{
		{"default keeps a 6-day-old session", "", 6 * 24 * time.Hour, false, ""},
		{"default sweeps an 8-day-old one", "", 8 * 24 * time.Hour, true, ""},
		{"a setting of 1 day sweeps a 2-day-old one", `{"taskOutputRetentionDays": 1}`, 48 * time.Hour, true, ""},
		{"zero is refused", `{"taskOutputRetentionDays": 0}`, 8 * 24 * time.Hour, true, "taskOutputRetentionDays 0: want a positive number of days; keeping task outputs 7 days"},
		{"a string is refused", `{"taskOutputRetentionDays": "week"}`, time.Hour, false, "taskOutputRetentionDays: json: cannot unmarshal string"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			temp, cwd := t.TempDir(), t.TempDir()
			if tt.setting != "" {
				os.MkdirAll(filepath.Join(cwd, ".troupe"), 0o755)
				os.WriteFile(filepath.Join(cwd, ".troupe", "settings.json"), []byte(tt.setting), 0o644)
			}
			old, err := task.OutputDir(temp, "proj", "old-session")
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(old, "b1.output")
			os.WriteFile(out, []byte("x"), 0o600)
			for _, p := range []string{out, old, filepath.Dir(old)} {
				os.Chtimes(p, now.Add(-tt.age), now.Add(-tt.age))
			}
			cur, _ := task.OutputDir(temp, "proj", "this-session")
			removed, warn := sweepTaskOutputs(settings.Files(t.TempDir(), cwd), temp, filepath.Dir(cur), now)
			if _, err := os.Stat(old); (err != nil) != tt.gone || len(removed) != map[bool]int{true: 1}[tt.gone] {
				t.Errorf("old session's folder: %v, removed %q; want gone: %v", err, removed, tt.gone)
			}
			if _, err := os.Stat(cur); err != nil {
				t.Errorf("this session's folder: %v; want it kept", err)
			}
			if !strings.Contains(warn, tt.warn) || (tt.warn == "") != (warn == "") {
				t.Errorf("warning %q; want %q", warn, tt.warn)
			}
		})
	}
}
