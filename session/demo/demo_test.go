package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/team"
)

// TestWrite writes the project and the script, at normal and slow speed:
// the .txt suffixes are gone and, slow, every reply waits SlowReply
// unless it has a delay of its own.
func TestWrite(t *testing.T) {
	for _, slow := range []bool{false, true} {
		dir := t.TempDir()
		project, script := filepath.Join(dir, "calc"), filepath.Join(dir, "script.json")
		if err := Write(project, script, slow); err != nil {
			t.Fatalf("Write(slow=%v): %v", slow, err)
		}
		for _, f := range []string{"calc.go", "calc_test.go", "README.md", "go.mod"} {
			if _, err := os.Stat(filepath.Join(project, f)); err != nil {
				t.Errorf("Write(slow=%v) left no %s: %v", slow, f, err)
			}
		}
		b, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Turns []struct {
				Reply map[string]any `json:"reply"`
			} `json:"turns"`
		}
		if err := json.Unmarshal(b, &doc); err != nil || len(doc.Turns) == 0 {
			t.Fatalf("script: %v, %d turns; want JSON with turns", err, len(doc.Turns))
		}
		slowed := 0
		for _, turn := range doc.Turns {
			if d, ok := turn.Reply["delay_ms"].(float64); ok && d == float64(SlowReply.Milliseconds()) {
				slowed++
			}
		}
		if slow && slowed == 0 || !slow && slowed != 0 {
			t.Errorf("Write(slow=%v): %d of %d replies wait %v", slow, slowed, len(doc.Turns), SlowReply)
		}
	}
}

// TestSlowScript: a delay set in the script is kept; a script that is
// not JSON is an error.
func TestSlowScript(t *testing.T) {
	out, err := slowScript([]byte(`{"turns": [{"reply": {"delay_ms": 5}}, {"reply": {}}, {"match": {}}]}`), SlowReply)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Turns []map[string]map[string]any }
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("slowScript output %s: %v", out, err)
	}
	if got := doc.Turns[0]["reply"]["delay_ms"]; got != 5.0 {
		t.Errorf("a reply's own delay became %v; want 5", got)
	}
	if got := doc.Turns[1]["reply"]["delay_ms"]; got != 1500.0 {
		t.Errorf("a reply without a delay got %v; want 1500", got)
	}
	if _, err := slowScript([]byte("{"), SlowReply); err == nil || !strings.Contains(err.Error(), "demo script") {
		t.Errorf("slowScript of broken JSON = %v; want an error naming the script", err)
	}
}

// TestStats counts a run's events and prints the summary, and the
// verdict fails with the problems named.
func TestStats(t *testing.T) {
	var s Stats
	for _, e := range []swarm.Event{
		{Kind: swarm.EventSpawned, Agent: "ann"}, {Kind: swarm.EventSpawned, Agent: "bob"},
		{Kind: swarm.EventPermission, Agent: "ann", Text: "ann asks to run go test ./..."},
		{Kind: swarm.EventPermission, Agent: "ann", Text: "allowed"},
		{Kind: swarm.EventIdle, Agent: "ann", Text: "ann is idle (completed task #1 Implement Sub)"},
		{Kind: swarm.EventIdle, Agent: "bob", Text: "bob is idle (completed task #"},
		{Kind: swarm.EventIdle, Agent: "bob", Text: "someone else is idle"},
		{Kind: swarm.EventMessage, Agent: "ann", Text: "done"},
		{Kind: swarm.EventExit, Agent: "ann", Text: "ann has shut down"},
		{Kind: "tool", Agent: team.LeadName, Text: "TeamCreate calc-team"},
		{Kind: "tool", Agent: team.LeadName, Text: "TaskCreate x"}, {Kind: "tool", Agent: team.LeadName, Text: "TaskCreate y"},
		{Kind: "tool", Agent: team.LeadName, Text: ""},
		{Kind: "tool", Agent: "ann", Text: "Edit calc.go"},
	} {
		s.Add(e)
	}
	if s.Deleted() {
		t.Error("Deleted() before the team was deleted = true")
	}
	s.Add(swarm.Event{Kind: swarm.EventDeleted})
	if !s.Deleted() {
		t.Error("Deleted() after EventDeleted = false")
	}
	var out bytes.Buffer
	if err := s.Summary(&out, Outcome{Mode: "in-process", Granted: 1, Answer: "Sub added"}); err != nil {
		t.Fatalf("Summary without problems = %v", err)
	}
	for _, want := range []string{"teammates spawned      2 (in-process)", "tasks completed        1", "lead's tool calls      TaskCreate 2, TeamCreate 1",
		"permission requests    1 (granted by the lead 1)", "idle notifications     2, reaching", "shutdowns              1", "result                 ok"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	err := s.Summary(&out, Outcome{Problems: []string{"a", "b"}})
	if err == nil || err.Error() != "demo failed: a; b" || !strings.Contains(out.String(), "FAILED: b") {
		t.Errorf("Summary with problems = %v\n%s; want them listed and returned", err, out.String())
	}
	var empty Stats
	out.Reset()
	_ = empty.Summary(&out, Outcome{})
	if !strings.Contains(out.String(), "(in the panes)") {
		t.Errorf("a summary without lead tool calls = %q; want (in the panes)", out.String())
	}
}

func TestApprover(t *testing.T) {
	var a Approver
	got, _ := a.Answer(t.Context(), swarm.PermissionAsk{Tool: "Bash", Input: json.RawMessage(`{"command":"go test ./..."}`)})
	if !got.Allow || !got.Always || got.Rule != "Bash(go test:*)" {
		t.Errorf("Answer(go test) = %+v; want allowed always for go test", got)
	}
	got, _ = a.Answer(t.Context(), swarm.PermissionAsk{Tool: "Bash", Input: json.RawMessage(`{"command":"go build ./..."}`)})
	if !got.Allow || got.Always {
		t.Errorf("Answer(go build) = %+v; want allowed once", got)
	}
	if a.Granted() != 2 {
		t.Errorf("Granted() = %d; want 2", a.Granted())
	}
}

type teamList struct {
	teams []team.Config
	err   error
}

func (l teamList) List(context.Context) ([]team.Config, error) { return l.teams, l.err }

// TestCheck checks the untouched project (Sub missing, team left) and
// one the team finished (no problems); go test runs in it for real.
func TestCheck(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	project := filepath.Join(t.TempDir(), "calc")
	if err := Write(project, filepath.Join(t.TempDir(), "s.json"), false); err != nil {
		t.Fatal(err)
	}
	left := teamList{teams: []team.Config{{Name: "calc-team", Members: []team.Member{{Name: "ann"}}}}, err: errors.New("one team unreadable")}
	got := strings.Join(Check(t.Context(), project, false, left), "\n")
	for _, want := range []string{"did not delete its team", `calc.go does not contain "func Sub`, "calc_test.go does not contain", "README.md does not contain",
		`team "calc-team" was not deleted (members: ann)`, "list teams: one team unreadable"} {
		if !strings.Contains(got, want) {
			t.Errorf("Check of the untouched project lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "go test") {
		t.Errorf("Check: go test failed in the untouched project:\n%s", got)
	}
	for file, add := range map[string]string{
		"calc.go":      "\n// Sub returns a - b.\nfunc Sub(a, b int) int { return a - b }\n",
		"calc_test.go": "\nfunc TestSub(t *testing.T) {\n\tif Sub(3, 1) != 2 {\n\t\tt.Fatal(\"Sub\")\n\t}\n}\n",
		"README.md":    "- `Sub(a, b)` returns a - b.\n",
	} {
		f, err := os.OpenFile(filepath.Join(project, file), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(add)
		f.Close()
	}
	if got := Check(t.Context(), project, true, teamList{}); len(got) != 0 {
		t.Errorf("Check of the finished project = %q; want no problems", got)
	}
	if got := Check(t.Context(), project, true, nil); len(got) != 0 {
		t.Errorf("Check without teams = %q; want no problems", got)
	}
}

// TestGitInit makes the project a repository with one commit.
func TestGitInit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is missing on CI")
		}
		t.Skip("no git command")
	}
	project := filepath.Join(t.TempDir(), "calc")
	if err := Write(project, filepath.Join(t.TempDir(), "s.json"), false); err != nil {
		t.Fatal(err)
	}
	if err := GitInit(t.Context(), project); err != nil {
		t.Fatalf("GitInit: %v", err)
	}
	out, err := exec.Command("git", "-C", project, "log", "--oneline").Output()
	if err != nil || !strings.Contains(string(out), "calc: Add") {
		t.Errorf("git log = %q, %v; want the one commit", out, err)
	}
	if err := GitInit(t.Context(), filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("GitInit of a missing folder succeeded")
	}
}
