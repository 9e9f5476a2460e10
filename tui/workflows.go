package tui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/transcript"
)

// /workflows: the session's workflow runs (local_workflow tasks), then a
// live view of one run (its phases with their agents' counts and its
// agents), then one agent's detail. The views read the task's detail at
// each frame, so they follow the task events as they come (docs/tui.md).
//
// A workflow agent is not a task of its own: Enter on one shows its row
// of the run's detail (task.Workflow) in full, and under it its
// transcript, read as a teammate's is (Options.Transcript, by the
// agent's id) while the view is open.

// wfState is the /workflows screens' state.
type wfState struct {
	sel    int     // the selected run of the list
	open   task.ID // the run whose live view is open
	agent  int     // the selected agent of the live view
	detail bool    // the selected agent's detail is open
	tx     wfTranscript
}

// wfTranscript is the transcript of the workflow agent whose view is
// open, read as it grows.
type wfTranscript struct {
	id      string // the agent's id: its transcript's name
	convo   convo
	off     int64
	reading bool
	err     string
}

// wfTranscriptMsg is what a read of a workflow agent's transcript found.
type wfTranscriptMsg struct {
	id    string
	lines []transcript.Line
	next  int64
	err   error
}

// readWfAgent reads more of the open workflow agent's transcript.
func (m *model) readWfAgent() tea.Cmd {
	tx := &m.wf.tx
	if m.screen != screenWorkflowAgent || m.opts.Transcript == nil || tx.reading {
		return nil
	}
	if w := m.openRun(); w != nil && m.wf.agent < len(w.Agents) && w.Agents[m.wf.agent].AgentID != tx.id {
		m.wf.tx = wfTranscript{id: w.Agents[m.wf.agent].AgentID} // it started since, or another agent
	}
	if tx.id == "" {
		return nil
	}
	tx.reading = true
	read, id, from := m.opts.Transcript, tx.id, tx.off
	return func() tea.Msg {
		lines, next, err := read(id, from)
		return wfTranscriptMsg{id: id, lines: lines, next: next, err: err}
	}
}

// wfSaid adds what a read found to the open agent's transcript.
func (m *model) wfSaid(msg wfTranscriptMsg) {
	tx := &m.wf.tx
	if msg.id != tx.id {
		return // another agent's view is open now
	}
	tx.reading, tx.off, tx.err = false, msg.next, ""
	if msg.err != nil && !errors.Is(msg.err, fs.ErrNotExist) {
		tx.err = msg.err.Error()
	}
	for _, l := range msg.lines {
		m.sayTo(&tx.convo, l)
	}
	if n := len(tx.convo.entries) - maxSaidEntries; n > 0 {
		tx.convo.drop(n)
	}
}

// workflowScreens reports whether one of the /workflows screens is open
// (no prompt shows there).
func (m *model) workflowScreens() bool {
	return m.screen == screenWorkflows || m.screen == screenWorkflow || m.screen == screenWorkflowAgent
}

// workflows are the session's workflow tasks, in the order they came.
func (m *model) workflows() []*taskView {
	var out []*taskView
	for _, id := range m.order {
		if tv := m.tasks[id]; tv != nil && tv.state.Type == task.LocalWorkflow {
			out = append(out, tv)
		}
	}
	return out
}

// openWorkflows shows the list of runs.
func (m *model) openWorkflows() {
	m.screen, m.wf = screenWorkflows, wfState{sel: max(0, len(m.workflows())-1)}
}

// openWorkflow shows the live view of run id.
func (m *model) openWorkflow(id task.ID) {
	m.screen, m.wf.open, m.wf.agent, m.wf.detail = screenWorkflow, id, 0, false
}

func (m *model) workflowsKey(k tea.KeyPressMsg) tea.Cmd {
	switch m.screen {
	case screenWorkflows:
		list := m.workflows()
		switch k.String() {
		case "esc", "left":
			m.screen = screenMain
		case "up", "k":
			m.wf.sel = max(0, m.wf.sel-1)
		case "down", "j":
			m.wf.sel = min(m.wf.sel+1, max(0, len(list)-1))
		case "enter", "right":
			if m.wf.sel < len(list) {
				m.openWorkflow(list[m.wf.sel].state.ID)
			}
		}
	case screenWorkflow:
		w := m.openRun()
		switch k.String() {
		case "esc", "left":
			m.screen = screenWorkflows
			if i := slices.IndexFunc(m.workflows(), func(tv *taskView) bool { return tv.state.ID == m.wf.open }); i >= 0 {
				m.wf.sel = i
			}
		case "up", "k":
			m.wf.agent = max(0, m.wf.agent-1)
		case "down", "j":
			if w != nil {
				m.wf.agent = min(m.wf.agent+1, max(0, len(w.Agents)-1))
			}
		case "home":
			m.wf.agent = 0
		case "end":
			if w != nil {
				m.wf.agent = max(0, len(w.Agents)-1)
			}
		case "enter", "right":
			if w != nil && m.wf.agent < len(w.Agents) {
				m.screen = screenWorkflowAgent
				if id := w.Agents[m.wf.agent].AgentID; id != m.wf.tx.id {
					m.wf.tx = wfTranscript{id: id}
				}
				m.wf.tx.convo.follow()
				return m.readWfAgent()
			}
		case "x":
			if tv := m.tasks[m.wf.open]; tv != nil && tv.state.Status.Active() {
				id := tv.state.ID
				return m.do(func(ctx context.Context) error { _, err := m.drv.Stop(ctx, string(id)); return err })
			}
		}
	case screenWorkflowAgent:
		page := max(1, m.convoHeight()/2)
		switch k.String() {
		case "esc", "left":
			m.screen = screenWorkflow
		case "pgup", "up":
			m.wf.tx.convo.scroll(m.st, map[string]int{"pgup": page, "up": 1}[k.String()], m.now)
		case "pgdown", "down":
			m.wf.tx.convo.scroll(m.st, -map[string]int{"pgdown": page, "down": 1}[k.String()], m.now)
		case "end":
			m.wf.tx.convo.follow()
		}
	}
	return nil
}

// openRun is the detail of the run whose live view is open, nil when the
// task is gone.
func (m *model) openRun() *task.Workflow {
	tv := m.tasks[m.wf.open]
	if tv == nil {
		return nil
	}
	w, _ := tv.state.Detail.(*task.Workflow)
	return w
}

// wfTokens is what a run spent: its usage once it ended, its agents' sum
// while it runs.
func wfTokens(w *task.Workflow) int64 {
	var sum int64
	for _, a := range w.Agents {
		sum += a.Tokens
	}
	return max(sum, w.Usage.TotalTokens)
}

// wfDone counts a run's settled agents.
func wfDone(w *task.Workflow) (done, failed int) {
	for _, a := range w.Agents {
		switch a.State {
		case "done":
			done++
		case "failed":
			failed++
		}
	}
	return done, failed
}

// wfPhase is a run's phase progress: "phase 2/3 Verify".
func wfPhase(w *task.Workflow) string {
	if len(w.Phases) == 0 {
		return "no phases"
	}
	i := slices.IndexFunc(w.Phases, func(p task.WorkflowPhase) bool { return p.Title == w.Phase })
	if i < 0 {
		return fmt.Sprintf("phase -/%d", len(w.Phases))
	}
	return fmt.Sprintf("phase %d/%d %s", i+1, len(w.Phases), termtext.Line(w.Phase))
}

// workflowsScreen lists the runs: state, name, phase progress, agents
// done of all, tokens.
func (m *model) workflowsScreen(h int) []string {
	list := m.workflows()
	out := []string{m.st.bold(fmt.Sprintf("Workflows (%d)", len(list)))}
	if len(list) == 0 {
		return append(out, m.st.dim("No workflow has run in this session (the Workflow tool starts one: docs/workflows.md)."))
	}
	out = append(out, m.st.dim(fmt.Sprintf("    %-9s %-16s %-9s %-16s %-10s %6s", "TASK", "NAME", "STATE", "PHASE", "AGENTS", "TOKENS")))
	m.wf.sel = min(m.wf.sel, len(list)-1)
	first := max(0, m.wf.sel-(h-3))
	for i := first; i < len(list); i++ {
		st := list[i].state
		w, _ := st.Detail.(*task.Workflow)
		if w == nil {
			w = &task.Workflow{}
		}
		done, failed := wfDone(w)
		agents := fmt.Sprintf("%d/%d", done, len(w.Agents))
		if failed > 0 {
			agents += fmt.Sprintf(" ✗%d", failed)
		}
		phase := "-"
		if len(w.Phases) > 0 {
			phase = strings.TrimPrefix(wfPhase(w), "phase ")
		}
		line := fmt.Sprintf("%s %-9s %s %-9s %s %-10s %6s", statusIcon(st.Status), termtext.Line(string(st.ID)),
			pad(termtext.Line(cmp.Or(w.Name, st.Description)), 16), st.Status, pad(phase, 16), agents, tokens(wfTokens(w)))
		line = ansi.Truncate(line, m.width-2, "…")
		if i == m.wf.sel {
			line = m.st.sel(ansi.Strip(line))
		} else {
			line = "  " + line
		}
		out = append(out, line)
	}
	return out
}

// agentIcon is an agent's state as a mark.
func agentIcon(state string) string {
	switch state {
	case "running":
		return "▶"
	case "done":
		return "✓"
	case "failed":
		return "✗"
	}
	return "·"
}

// workflowScreen is the live view of one run: its head, its phases with
// their counts, its agents with label, state, tokens and last activity.
func (m *model) workflowScreen(h int) []string {
	tv := m.tasks[m.wf.open]
	w := m.openRun()
	if tv == nil || w == nil {
		return []string{"The workflow task is gone."}
	}
	st := tv.state
	L := termtext.Line // every field below may hold a script's or a model's text
	done, _ := wfDone(w)
	out := []string{
		m.st.bold(ansi.Truncate(fmt.Sprintf("%s %s · %s · %s · %s", statusIcon(st.Status), L(cmp.Or(w.Name, st.Description)), L(string(st.ID)), st.Status, wfPhase(w)), m.width, "…")),
		m.st.dim(ansi.Truncate(fmt.Sprintf("run %s · %d/%d agents · %s tokens · %s", L(w.RunID), done, len(w.Agents), tokens(wfTokens(w)), L(w.Dir)), m.width, "…")),
	}
	if w.Error != "" {
		out = append(out, m.st.bad(ansi.Truncate("error: "+L(w.Error), m.width, "…")))
	} else if w.Result != "" {
		out = append(out, ansi.Truncate("result: "+L(w.Result), m.width, "…"))
	}
	out = append(out, m.st.dim("Phases"))
	if len(w.Phases) == 0 {
		out = append(out, m.st.dim("  none declared"))
	}
	nameW := 12
	for _, p := range w.Phases {
		nameW = max(nameW, min(ansi.StringWidth(L(p.Title)), 24))
	}
	for _, p := range w.Phases {
		mark := " "
		if p.Title == w.Phase && st.Status.Active() {
			mark = "▶"
		}
		out = append(out, ansi.Truncate(fmt.Sprintf("%s %s  %d pending · %d running · %d done · %d failed", mark, pad(L(p.Title), nameW),
			p.Pending, p.Running, p.Done, p.Failed), m.width, "…"))
	}
	head := fmt.Sprintf("Agents (%d)", len(w.Agents))
	if slices.ContainsFunc(w.Agents, func(a task.WorkflowAgent) bool { return a.Cached }) {
		head += " · * answered from an earlier run's journal"
	}
	out = append(out, m.st.dim(head))
	if len(w.Agents) == 0 {
		return append(out, m.st.dim("  none started yet"))
	}
	m.wf.agent = min(m.wf.agent, len(w.Agents)-1)
	room := max(1, h-len(out))
	first := max(0, m.wf.agent-room+1)
	labelW := min(max(16, m.width/4), 40)
	for i := first; i < len(w.Agents) && i < first+room; i++ {
		a := w.Agents[i]
		label := pad(L(a.Label), labelW)
		state := a.State
		if a.Cached {
			state += "*"
		}
		act := L(a.Activity)
		if !a.At.IsZero() {
			ago := fmtAge(m.now.Sub(a.At)) + " ago"
			act = strings.TrimSuffix(ago+" · "+act, " · ")
		}
		line := fmt.Sprintf("%s %s  %s %-8s %7s  %s", agentIcon(a.State), label, pad(L(a.Phase), 12), state, tokens(a.Tokens), act)
		line = ansi.Truncate(line, m.width-2, "…")
		if i == m.wf.agent {
			line = m.st.sel(ansi.Strip(line))
		} else {
			line = "  " + line
		}
		out = append(out, line)
	}
	return out
}

// workflowAgentScreen is one agent of the open run in full, and its
// transcript below when there is one.
func (m *model) workflowAgentScreen(h int) []string {
	w := m.openRun()
	if w == nil || m.wf.agent >= len(w.Agents) {
		return []string{"The workflow agent is gone."}
	}
	a := w.Agents[m.wf.agent]
	L := termtext.Line
	state := a.State
	if a.Cached {
		state += " (answered from an earlier run's journal)"
	}
	out := []string{
		m.st.bold(ansi.Truncate(fmt.Sprintf("%s %s · %s", agentIcon(a.State), L(a.Label), state), m.width, "…")),
		ansi.Truncate(fmt.Sprintf("agent() call %d of workflow %s (run %s)", a.Index+1, L(w.Name), L(w.RunID)), m.width, "…"),
		"phase: " + ansi.Truncate(L(cmp.Or(a.Phase, "none")), m.width-7, "…"),
		"tokens: " + tokens(a.Tokens),
	}
	if !a.At.IsZero() {
		out = append(out, "last change: "+fmtAge(m.now.Sub(a.At))+" ago")
	}
	if a.Activity != "" {
		what := "last activity:"
		if a.State == "failed" {
			what = "error:"
		}
		out = append(out, m.st.dim(what))
		out = append(out, strings.Split(ansi.Wrap(termtext.Clean(a.Activity), m.width, " "), "\n")...)
	}
	if w.Dir != "" {
		out = append(out, m.st.dim(ansi.Truncate("its answer is in the run's journal: "+L(w.Dir)+"/journal.jsonl", m.width, "…")))
	}
	tx := &m.wf.tx
	if tx.id == "" || tx.id != a.AgentID || m.opts.Transcript == nil {
		return out
	}
	out = append(out, m.st.dim(ansi.Truncate("─ transcript of "+L(tx.id)+" "+strings.Repeat("─", m.width), m.width, "")))
	room := h - len(out)
	if tx.err != "" {
		room--
	}
	if room > 0 && len(tx.convo.entries) > 0 {
		tx.convo.width = m.width
		out = append(out, tx.convo.view(m.st, room, m.now)...)
	} else if room > 0 {
		out = append(out, m.st.dim("nothing yet"))
	}
	if tx.err != "" {
		out = append(out, m.st.warn("transcript: "+ansi.Truncate(L(tx.err), m.width-12, "…")))
	}
	return out
}

// pad cuts or pads s to w cells.
func pad(s string, w int) string {
	s = ansi.Truncate(s, w, "…")
	return s + strings.Repeat(" ", max(0, w-ansi.StringWidth(s)))
}

// wfAgentKeys are the keys of an agent's view.
func (m *model) wfAgentKeys() string {
	if m.wf.tx.id != "" && m.opts.Transcript != nil {
		return "↑↓ PgUp/PgDn scroll its transcript · End follows it · Esc back to the run"
	}
	return "Esc back to the run"
}
