package tui

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/transcript"

	"github.com/troupe-dev/troupe/session"
	"github.com/troupe-dev/troupe/task"
)

// wfRun is a running review-verify workflow: two reviews done, one
// running, one verify pending.
func wfRun() task.State {
	d := &task.Workflow{Name: "review-verify", RunID: "wf_0123456789ab", Dir: "/home/u/.troupe/sessions/s1/workflows/wf_0123456789ab", Phase: "Verify",
		Phases: []task.WorkflowPhase{{Title: "Review", Done: 2, Running: 1}, {Title: "Verify", Pending: 1}, {Title: "Report"}},
		Agents: []task.WorkflowAgent{
			{Index: 0, Label: "review a.go", Phase: "Review", State: "done", Tokens: 4578, Activity: "Reading a.go", At: t0.Add(2 * time.Second)},
			{Index: 1, Label: "review b.go", Phase: "Review", State: "done", Cached: true, Tokens: 3900, At: t0.Add(3 * time.Second)},
			{Index: 2, Label: "review \x1b[31mc.go", Phase: "Review", State: "running", Tokens: 1200, Activity: "Running go vet ./...", At: t0.Add(5 * time.Second), AgentID: "a0000000c"},
			{Index: 3, Label: "verify a.go", Phase: "Verify", State: "pending", At: t0.Add(6 * time.Second)},
		}}
	return task.State{ID: "w00000001", Type: task.LocalWorkflow, Status: task.Running, Start: t0, Description: "review-verify", Detail: d}
}

func wfStarted(m *model, st task.State) {
	ev(m, session.Event{Kind: session.KindTaskStarted, Task: &task.Event{Kind: task.EventStarted, State: st}})
}

// TestWorkflowPill: a running workflow is the "1 workflow" pill, two are
// "2 workflows", an ended one is none.
func TestWorkflowPill(t *testing.T) {
	m, _ := newTest(t)
	st := wfRun()
	wfStarted(m, st)
	if got := m.pills(); !slices.Equal(got, []string{"1 workflow"}) {
		t.Errorf("pills %q, want [1 workflow]", got)
	}
	two := wfRun()
	two.ID = "w00000002"
	wfStarted(m, two)
	if got := m.pills(); !slices.Equal(got, []string{"2 workflows"}) {
		t.Errorf("pills %q, want [2 workflows]", got)
	}
	for _, s := range []task.State{st, two} {
		s.Status = task.Completed
		ev(m, session.Event{Kind: session.KindTaskEnded, Task: &task.Event{Kind: task.EventTerminated, State: s}})
	}
	if got := m.pills(); len(got) != 0 {
		t.Errorf("pills %q after both ended, want none", got)
	}
}

// TestWorkflowsFlow: /workflows lists the runs, Enter opens one live (a
// progress event shows at once), Enter on an agent opens it, Esc goes
// back one screen at a time; x in the live view stops the run.
func TestWorkflowsFlow(t *testing.T) {
	m, r := newTest(t)
	m.Update(tickMsg(t0.Add(10 * time.Second)))
	press(m, "/workflows", "enter")
	if m.screen != screenWorkflows {
		t.Fatalf("/workflows: screen %d, want the runs", m.screen)
	}
	if f := m.frame(); !strings.Contains(f, "No workflow has run") {
		t.Errorf("empty list frame:\n%s", f)
	}
	press(m, "enter") // nothing to open
	if m.screen != screenWorkflows {
		t.Fatalf("Enter on an empty list: screen %d", m.screen)
	}
	st := wfRun()
	wfStarted(m, st)
	press(m, "enter")
	if m.screen != screenWorkflow || m.wf.open != "w00000001" {
		t.Fatalf("Enter: screen %d open %q, want the live view of w00000001", m.screen, m.wf.open)
	}
	if f := m.frame(); !strings.Contains(f, "phase 2/3 Verify") || !strings.Contains(f, "2/4 agents") || strings.Contains(f, "\x1b[31m") {
		t.Errorf("live view:\n%s", f)
	}
	// The verify agent starts: the view follows the task's progress.
	upd := st
	upd.Detail = st.Detail.(*task.Workflow).With(func(w *task.Workflow) {
		w.Agents[3].State, w.Agents[3].Activity, w.Agents[3].Tokens = "running", "Reading the finding", 800
		w.Phases[1].Pending, w.Phases[1].Running = 0, 1
	})
	ev(m, session.Event{Kind: session.KindTaskProgress, Task: &task.Event{Kind: task.EventUpdated, State: upd}})
	if f := m.frame(); !strings.Contains(f, "0 pending · 1 running") || !strings.Contains(f, "800  4s ago · Reading the") {
		t.Errorf("live view after progress:\n%s", f)
	}
	press(m, "down", "down", "down", "down", "down") // stops at the last agent
	if m.wf.agent != 3 {
		t.Fatalf("selected agent %d, want 3 (the last)", m.wf.agent)
	}
	press(m, "up", "enter")
	if m.screen != screenWorkflowAgent {
		t.Fatalf("Enter on an agent: screen %d", m.screen)
	}
	if f := m.frame(); !strings.Contains(f, `review \x1b[31mc.go · running`) || !strings.Contains(f, "Running go vet ./...") {
		t.Errorf("agent detail:\n%s", f)
	}
	press(m, "esc")
	if m.screen != screenWorkflow {
		t.Fatalf("Esc from the agent: screen %d", m.screen)
	}
	press(m, "x")
	if !slices.Contains(r.calls, "stop w00000001") {
		t.Errorf("x: calls %q, want stop w00000001", r.calls)
	}
	press(m, "esc", "esc")
	if m.screen != screenMain {
		t.Fatalf("Esc twice: screen %d, want the conversation", m.screen)
	}
}

// TestTasksOpensWorkflow: Enter on a workflow task of /tasks opens its
// live view, and Esc from there goes to the runs.
func TestTasksOpensWorkflow(t *testing.T) {
	m, _ := newTest(t)
	wfStarted(m, wfRun())
	press(m, "/tasks", "enter", "enter")
	if m.screen != screenWorkflow || m.wf.open != "w00000001" {
		t.Fatalf("screen %d open %q, want the live view", m.screen, m.wf.open)
	}
}

// TestWorkflowGone: a run evicted while its view is open says so.
func TestWorkflowGone(t *testing.T) {
	m, _ := newTest(t)
	m.openWorkflow("w0000dead")
	if f := m.frame(); !strings.Contains(f, "The workflow task is gone.") {
		t.Errorf("frame:\n%s", f)
	}
	press(m, "enter", "down", "x")
	if m.screen != screenWorkflow {
		t.Errorf("keys on a gone run moved to screen %d", m.screen)
	}
}

func TestWorkflowFrames(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {200, 60}} {
		m, _ := newTest(t)
		m.Update(tea.WindowSizeMsg{Width: size.w, Height: size.h})
		m.Update(tickMsg(t0.Add(12 * time.Second)))
		m.opts.Transcript = func(name string, from int64) ([]transcript.Line, int64, error) {
			if name != "a0000000c" || from > 0 {
				return nil, from, nil
			}
			return cTranscript, 10, nil
		}
		wfStarted(m, wfRun())
		done := wfRun()
		done.ID, done.Status, done.End = "w00000002", task.Failed, t0.Add(9*time.Second)
		done.Detail = done.Detail.(*task.Workflow).With(func(w *task.Workflow) {
			w.Name, w.RunID, w.Error = "triage", "wf_ba9876543210", "agent cap: 50 agents"
			w.Usage.TotalTokens = 20000
		})
		ev(m, session.Event{Kind: session.KindTaskEnded, Task: &task.Event{Kind: task.EventTerminated, State: done}})
		suffix := ""
		if size.w == 200 {
			suffix = "-wide"
		}
		press(m, "/workflows", "enter", "up")
		golden(t, m, "workflows"+suffix)
		press(m, "enter")
		golden(t, m, "workflow"+suffix)
		m.Update(run(press1(m, "down", "down", "enter")))
		golden(t, m, "workflow-agent"+suffix)
	}
}

// TestWorkflowScroll: with more agents than rows, the selected agent stays
// on screen and the frame keeps the window's size.
func TestWorkflowScroll(t *testing.T) {
	m, _ := newTest(t)
	st := wfRun()
	st.Detail = st.Detail.(*task.Workflow).With(func(w *task.Workflow) {
		for i := 4; i < 40; i++ {
			w.Agents = append(w.Agents, task.WorkflowAgent{Index: i, Label: fmt.Sprintf("verify f%02d.go", i), Phase: "Verify", State: "pending"})
		}
	})
	wfStarted(m, st)
	m.openWorkflow(st.ID)
	for i := 0; i < 30; i++ {
		press(m, "down")
	}
	f := m.frame()
	if !strings.Contains(f, "» · verify f30.go") {
		t.Errorf("the selected agent (30) is not on screen:\n%s", f)
	}
	if n := len(strings.Split(f, "\n")); n != m.height {
		t.Errorf("%d lines, want %d", n, m.height)
	}
	press(m, "end")
	if f := m.frame(); !strings.Contains(f, "» · verify f39.go") {
		t.Errorf("End: the last agent is not selected:\n%s", f)
	}
}

// cTranscript is what the agent reviewing c.go wrote and did.
var cTranscript = []transcript.Line{
	{Type: agent.EventUser, Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("Review c.go for bugs")}}},
	{Type: agent.EventToolUse, Call: &llm.Block{Type: llm.BlockToolUse, Name: "Bash", Input: json.RawMessage(`{"command":"go vet ./..."}`)}},
	{Type: agent.EventAssistant, Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("c.go closes the file twice: \x1b[31mline 12\x1b[0m and line 30.")}}},
}

// press1 presses keys and returns the command the last one gave, unrun.
func press1(m *model, keys ...string) tea.Cmd {
	press(m, keys[:len(keys)-1]...)
	km := tea.KeyPressMsg{Code: tea.KeyEnter}
	if keys[len(keys)-1] != "enter" {
		panic("press1 ends with enter")
	}
	_, cmd := m.Update(km)
	return cmd
}

// TestWorkflowAgentTranscript: Enter on an agent that started reads its
// transcript by its id, then from where the read ended on each tick while
// the view is open, and shows it cleaned; none is read once it closed, and
// an agent without an id (not started) has no transcript.
func TestWorkflowAgentTranscript(t *testing.T) {
	m, _ := newTest(t)
	var mu sync.Mutex
	var reads []string
	m.opts.Transcript = func(name string, from int64) ([]transcript.Line, int64, error) {
		mu.Lock()
		defer mu.Unlock()
		reads = append(reads, fmt.Sprintf("%s@%d", name, from))
		if from == 0 {
			return cTranscript, 100, nil
		}
		return nil, from, nil
	}
	wfStarted(m, wfRun())
	m.openWorkflow("w00000001")
	press(m, "down", "down")
	cmd := press1(m, "enter")
	if cmd == nil {
		t.Fatal("Enter on a started agent read no transcript")
	}
	m.Update(cmd())
	_, cmd = m.Update(tickMsg(t0.Add(20 * time.Second)))
	if cmd == nil {
		t.Fatal("no read on a tick with the agent's view open")
	}
	m.Update(cmd())
	if want := []string{"a0000000c@0", "a0000000c@100"}; !slices.Equal(reads, want) {
		t.Errorf("reads %q, want %q", reads, want)
	}
	f := m.frame()
	for _, want := range []string{"transcript of a0000000c", "Review c.go for bugs", `c.go closes the file twice: \x1b[31mline 12\x1b[0m`} {
		if !strings.Contains(ansi.Strip(f), want) {
			t.Errorf("the agent's view lacks %q:\n%s", want, f)
		}
	}
	press(m, "esc")
	if _, cmd := m.Update(tickMsg(t0.Add(21 * time.Second))); cmd != nil {
		t.Error("a transcript read with the agent's view closed")
	}
	press(m, "down") // the pending agent: no id yet
	if cmd := press1(m, "enter"); cmd != nil {
		t.Error("a transcript read for an agent that has not started")
	}
	if f := m.frame(); strings.Contains(f, "transcript of") {
		t.Errorf("a transcript shown for an agent that has not started:\n%s", f)
	}
}
