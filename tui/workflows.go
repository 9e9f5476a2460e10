package tui

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/task"
)

// /workflows: the session's workflow runs (local_workflow tasks), then a
// live view of one run (its phases with their agents' counts and its
// agents), then one agent's detail. The views read the task's detail at
// each frame, so they follow the task events as they come (docs/tui.md).
//
// A workflow agent is not a task of its own: the run's detail
// (task.Workflow) is all the session tells of it, so Enter on an agent
// shows that row in full (label, phase, state, tokens, last activity).

// wfState is the /workflows screens' state.
type wfState struct {
	sel    int     // the selected run of the list
	open   task.ID // the run whose live view is open
	agent  int     // the selected agent of the live view
	detail bool    // the selected agent's detail is open
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
			}
		case "x":
			if tv := m.tasks[m.wf.open]; tv != nil && tv.state.Status.Active() {
				id := tv.state.ID
				return m.do(func(ctx context.Context) error { _, err := m.drv.Stop(ctx, string(id)); return err })
			}
		}
	case screenWorkflowAgent:
		switch k.String() {
		case "esc", "left":
			m.screen = screenWorkflow
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

// workflowAgentScreen is one agent of the open run in full.
func (m *model) workflowAgentScreen() []string {
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
	return out
}

// pad cuts or pads s to w cells.
func pad(s string, w int) string {
	s = ansi.Truncate(s, w, "…")
	return s + strings.Repeat(" ", max(0, w-ansi.StringWidth(s)))
}
