package kit

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/budget/claudelog"
	"github.com/troupe-dev/troupe/llm"
)

func claudeLine(team, agent, id string, in int64) string {
	return `{"type":"assistant","teamName":"` + team + `","agentName":"` + agent + `","sessionId":"s-1","message":{"id":"` + id +
		`","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":` +
		itoa(in) + `,"output_tokens":3}}}` + "\n"
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func newLedgerMeter(t *testing.T, dir string, limits budget.Limits, exceeded func(*budget.ExceededError)) *budget.Meter {
	return NewMeter(budget.Config{Limits: limits, OnExceeded: exceeded}, dir, true, time.Now, func(msg string) { t.Error(msg) })
}

func llmUsage(in int64) llm.Usage { return llm.Usage{InputTokens: in, OutputTokens: 1} }

// The calls of the lead's Claude Code teammates, written in the lead's
// project folder, reach the meter as they are written, each once; a
// member of a team the lead did not lead is not charged.
func TestClaudeMates(t *testing.T) {
	projects := filepath.Join(t.TempDir(), "projects")
	cwd := "/work/repo"
	meter := budget.NewMeter(budget.Config{})
	read, stop := ClaudeMates{Projects: projects, Cwd: cwd, Meter: meter, Led: func() []string { return []string{"ours"} }}.Follow()
	defer stop()
	dir := filepath.Join(projects, claudelog.ProjectDir(cwd))
	if got := filepath.Base(dir); got != "-work-repo" {
		t.Errorf("project folder %q; want -work-repo, as Claude Code names it", got)
	}
	f, err := os.OpenFile(filepath.Join(dir, "s-1.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString(claudeLine("ours", "helper", "msg_1", 100))
	f.WriteString(claudeLine("theirs", "other", "msg_2", 200))
	deadline := time.Now().Add(10 * time.Second)
	for meter.ByAgent()["helper"].Calls == 0 {
		if time.Now().After(deadline) {
			t.Fatal("helper's call was not charged from the live watch")
		}
		time.Sleep(10 * time.Millisecond)
	}
	read() // the end of the run reads again: nothing is counted twice
	by := meter.ByAgent()
	if s := by["helper"]; s.Calls != 1 || s.Usage.InputTokens != 100 {
		t.Errorf("helper's spending %+v; want one call of 100 input tokens", s)
	}
	if _, ok := by["other"]; ok {
		t.Errorf("a member of a team the lead did not lead was charged: %+v", by)
	}
}

// WatchLedger makes the meter see a pane teammate's spending, written to
// the ledger by another process, as it is written: a limit reached calls
// OnExceeded without a call of the lead's.
func TestWatchLedger(t *testing.T) {
	dir := t.TempDir()
	exceeded := make(chan *budget.ExceededError, 1)
	lead := newLedgerMeter(t, dir, budget.Limits{Tokens: 50}, func(e *budget.ExceededError) { exceeded <- e })
	stop := WatchLedger(dir, lead)
	defer stop()
	mate := newLedgerMeter(t, dir, budget.Limits{}, nil) // the pane teammate's process
	if err := mate.Add("ann", "m", llmUsage(80)); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-exceeded:
		if e.Limit != "--max-tokens" {
			t.Errorf("exceeded %+v; want the session's --max-tokens", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the lead's meter did not see the teammate's spending in the ledger")
	}
}
