package workflow

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/troupe-dev/troupe/task"
)

// Snapshot reads the run in folder dir as a task detail, for a view that
// has only the disk (the dashboard): the phases come from the script's
// meta, the settled agents from the journal (label, phase, state, tokens,
// error), the agents still running from the output file's "started"
// lines, the current phase from its "==" lines. An agent running now
// gets the phase current when it started (the output file does not name
// an explicit opts.phase); everything the journal names is exact.
func Snapshot(dir string) (RunInfo, *task.Workflow, error) {
	var info RunInfo
	b, err := os.ReadFile(filepath.Join(dir, RunFile))
	if err != nil {
		return info, nil, fmt.Errorf("workflow run %s: %w", filepath.Base(dir), err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, nil, fmt.Errorf("workflow run %s: %s: %w", filepath.Base(dir), RunFile, err)
	}
	w := &task.Workflow{Name: info.Name, RunID: info.ID, Dir: dir, Error: info.Error,
		Usage: task.Usage{TotalTokens: info.Usage.Total(), ToolUses: info.Usage.ToolUses}}
	if src, err := os.ReadFile(filepath.Join(dir, ScriptFile)); err == nil {
		if s, err := Parse(ScriptFile, string(src)); err == nil {
			for _, t := range s.Meta.PhaseTitles() {
				w.Phases = append(w.Phases, task.WorkflowPhase{Title: t})
			}
		}
	}
	at := map[int]int{} // agent index -> position in w.Agents
	agent := func(idx int, label string) *task.WorkflowAgent {
		if i, ok := at[idx]; ok {
			return &w.Agents[i]
		}
		at[idx] = len(w.Agents)
		w.Agents = append(w.Agents, task.WorkflowAgent{Index: idx, Label: label, State: StatePending})
		return &w.Agents[len(w.Agents)-1]
	}
	if f, err := os.Open(filepath.Join(dir, OutputFile)); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), MaxJournalLine)
		for sc.Scan() {
			line := sc.Text()
			if t, ok := strings.CutPrefix(line, "== "); ok {
				w.Phase = t
				continue
			}
			if m := startedLine.FindStringSubmatch(line); m != nil {
				idx, _ := strconv.Atoi(m[1])
				a := agent(idx, m[2])
				a.Phase = w.Phase
				if m[3] == "started" {
					a.State = StateRunning
				} else {
					a.Cached = true
				}
			}
		}
		f.Close()
	}
	entries, err := LoadJournal(dir)
	for _, e := range entries {
		a := agent(e.Index, e.Label)
		a.Label, a.Cached, a.Tokens, a.AgentID = e.Label, e.Cached, e.Usage.Total(), e.AgentID
		if e.Phase != "" {
			a.Phase = e.Phase
		}
		if e.Error != "" {
			a.State, a.Activity = StateFailed, e.Error
		} else {
			a.State, a.Activity = StateDone, excerpt(string(e.Result))
		}
	}
	if info.Status != "running" { // an agent the run left unsettled ended with it
		for i := range w.Agents {
			if w.Agents[i].State == StateRunning {
				w.Agents[i].State = StateFailed
				w.Agents[i].Activity = "the run ended (" + info.Status + ") before it settled"
			}
		}
	}
	for _, a := range w.Agents {
		ensurePhase(w, a.Phase)
	}
	tally(w)
	if err != nil {
		return info, w, fmt.Errorf("workflow run %s: journal: %w", info.ID, err)
	}
	return info, w, nil
}

// startedLine is an output line of OutputLine for an agent that started
// or was answered from the journal.
var startedLine = regexp.MustCompile(`^\[(\d+)\] (.*): (started|from the journal)$`)
