package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// /loop in the real terminal: with an interval it runs the prompt now
// and the footer shows the next wake until /loop stop; without one the
// lead paces itself with ScheduleWakeup, whose firing shows as a
// scheduled input line, not as typed.
func TestTUILoop(t *testing.T) {
	dir := t.TempDir()
	script := `{"turns":[
 {"match":{"user":"check CI"},"reply":{"text":"CI-GREEN"},"repeat":true},
 {"match":{"user":"self-paced"},"reply":{"tool_calls":[{"name":"ScheduleWakeup","input":{"delaySeconds":0.5,"reason":"deploys are slow","prompt":"poll the deploy"}}]}},
 {"match":{"tool_result":"ScheduleWakeup","user":"loop is over"},"reply":{"text":"LOOP-DONE"}},
 {"match":{"tool_result":"ScheduleWakeup"},"reply":{"text":"WAITING-FOR-WAKE"}},
 {"match":{"user":"SCHEDULED WAKEUP"},"reply":{"tool_calls":[{"name":"ScheduleWakeup","input":{"stop":true}}]}}
]}`
	scriptFile := filepath.Join(dir, "script.json")
	writeFile(t, scriptFile, script)
	p := startTUISize(t, 100, 30, dir, []string{"TROUPE_HOME=" + filepath.Join(dir, "home"), "HOME=" + dir, envTestWakeupMin + "=100ms"},
		"--provider", "scripted", "--script", scriptFile)

	p.submit("/loop 10m check CI")
	p.wait("CI-GREEN", 10*time.Second)
	s := p.wait("Every 10m", 5*time.Second)
	if !strings.Contains(s, "next wake") || !strings.Contains(s, "*/10 * * * *") {
		t.Errorf("the screen lacks the footer's next wake or the loop's cron:\n%s", s)
	}
	p.submit("/cron")
	p.wait("recurring  next", 5*time.Second)
	p.submit("/loop stop")
	s = p.wait("Stopped: 1 cron job(s) deleted", 5*time.Second)
	for deadline := time.Now().Add(5 * time.Second); strings.Contains(s, "next wake"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the footer still shows the next wake after /loop stop:\n%s", s)
		}
		s = p.screen()
	}

	p.submit("/loop poll the deploy")
	p.wait("WAITING-FOR-WAKE", 10*time.Second)
	s = p.wait("LOOP-DONE", 10*time.Second)
	if !strings.Contains(s, "⏰ wakeup: poll the deploy") {
		t.Errorf("the wakeup's firing is not shown as a scheduled input:\n%s", s)
	}
	p.quit()
}
