package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// loopScript is a self-paced /loop: the lead arms ScheduleWakeup on its
// prompt and again at each firing.
const loopScript = `{"turns":[
 {"match":{"user":"start"},"reply":{"tool_calls":[{"name":"ScheduleWakeup","input":{"delaySeconds":0.05,"reason":"polling","prompt":"tick"}}]}},
 {"match":{"tool_result":"ScheduleWakeup"},"reply":{"text":"armed"},"repeat":true},
 {"match":{"user":"SCHEDULED WAKEUP"},"reply":{"tool_calls":[{"name":"ScheduleWakeup","input":{"delaySeconds":0.05,"reason":"polling","prompt":"tick"}}]},"repeat":true}
]}`

// troupe -p with a self-paced loop stays up for its wakeups and ends at
// --max-wakeups, saying so in stream-json: a schedule line for each
// change, a scheduled_fire line for each firing.
func TestHeadlessMaxWakeups(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(t.TempDir(), "script.json")
	writeFile(t, script, loopScript)
	out, err := headlessRun(t, dir, map[string]string{envTestWakeupMin: "10ms"}, "", "-p", "--trust", "--provider", "scripted", "--script", script,
		"--output-format", "stream-json", "--max-wakeups", "2", "start")
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out)
	}
	var fires, schedules int
	var result map[string]any
	for _, l := range streamLines(t, out) {
		switch l["subtype"] {
		case "scheduled_fire":
			fires++
			if l["kind"] != "wakeup" || l["prompt"] != "tick" || l["reason"] != "polling" {
				t.Errorf("scheduled_fire line %v; want the wakeup's kind, prompt and reason", l)
			}
		case "schedule":
			schedules++
		}
		if l["type"] == "result" {
			result = l
		}
	}
	if fires != 2 {
		t.Fatalf("%d scheduled_fire lines with --max-wakeups 2; want 2\n%s", fires, out)
	}
	if schedules < 3 {
		t.Errorf("%d schedule lines; want one for each arming and firing (at least 3)", schedules)
	}
	if result == nil || result["is_error"] != false || result["result"] != "armed" {
		t.Fatalf("result line %v; want a clean end on the last answer", result)
	}
}

func TestHeadlessMaxWakeupsRefused(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	writeFile(t, script, loopScript)
	out, err := headlessRun(t, t.TempDir(), nil, "", "-p", "--trust", "--provider", "scripted", "--script", script, "--max-wakeups", "-1", "hi")
	if err == nil || !strings.Contains(err.Error(), "--max-wakeups -1") {
		t.Fatalf("troupe -p --max-wakeups -1 = %v; want a usage error naming it\n%s", err, out)
	}
}

// recordedSchedule returns the last schedule line of a session record.
func recordedSchedule(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var last map[string]any
	for _, l := range strings.Split(string(b), "\n") {
		var v map[string]any
		if json.Unmarshal([]byte(l), &v) == nil && v["type"] == "schedule" {
			last = v
		}
	}
	return last
}
