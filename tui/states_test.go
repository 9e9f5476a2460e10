package tui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/session"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
)

// A teammate shows "? waiting" while its question is open and not after,
// "plan" while its plan waits, working the moment a message wakes it,
// "stopping" while it shuts down, "stopped" when stopped on purpose and
// dead only when it crashed.
func TestTeammateStates(t *testing.T) {
	m, _ := newTest(t)
	teammates(m)
	alice, carol := m.mateInfo["alice"], m.mateInfo["carol"]
	state := func(mv *mateView) string { return m.mateState(mv) }
	q := session.Question{ID: "q1", Agent: "alice", Tool: "Bash", Input: json.RawMessage(`{"command":"ls"}`), Teammate: true}
	ev(m, session.Event{Kind: session.KindPermission, Question: &q})
	ev(m, session.Event{Kind: session.KindTeammateState, Team: &swarm.Event{Agent: "alice", Kind: swarm.EventPermission, Text: "alice asks for Bash"}})
	if s := state(alice); s != "waiting" {
		t.Errorf("with its question open: %q; want waiting", s)
	}
	ev(m, session.Event{Kind: session.KindPermissionAnswer, Question: &q, Verdict: &session.Verdict{Allow: true}})
	if s := state(alice); s != "working" {
		t.Errorf("after the answer: %q; want working", s)
	}
	p := session.Question{ID: "q2", Agent: "alice", Plan: "1. do it"}
	ev(m, session.Event{Kind: session.KindPermission, Question: &p})
	if s := state(alice); s != "plan" {
		t.Errorf("with its plan waiting: %q; want plan", s)
	}
	if s := state(carol); s != "idle" {
		t.Fatalf("carol: %q; want idle", s)
	}
	agentEv(m, agent.Event{Type: agent.EventToolUse, Call: &llm.Block{Type: llm.BlockToolUse, Name: "SendMessage", Input: json.RawMessage(`{"to":"carol","message":"go"}`)}})
	if s := state(carol); s != "working" {
		t.Errorf("carol after the lead's message: %q; want working", s)
	}
	ev(m, session.Event{Kind: session.KindTeammateState, Team: &swarm.Event{Agent: "carol", Kind: swarm.EventShutdown, Text: "got a shutdown request from team-lead"}})
	if s := state(carol); s != "stopping" {
		t.Errorf("carol shutting down: %q; want stopping", s)
	}
	for _, c := range []struct {
		status task.Status
		want   string
	}{{task.Completed, "shut down"}, {task.Killed, "stopped"}, {task.Failed, "dead"}} {
		st := task.State{ID: "t00000001", Type: task.InProcessTeammate, Status: c.status, Start: t0, End: t0, Detail: &task.Teammate{AgentName: "bob"}}
		m.mateInfo["bob"].state = "working"
		ev(m, session.Event{Kind: session.KindTaskEnded, Task: &task.Event{Kind: task.EventTerminated, State: st}})
		if s := state(m.mateInfo["bob"]); s != c.want {
			t.Errorf("bob's task %s: %q; want %q", c.status, s, c.want)
		}
	}
}

// A call's duration leaves out the time it waited for the person's
// answer; while it waits, it says so.
func TestToolDurationWithoutTheWait(t *testing.T) {
	m, _ := newTest(t)
	in := json.RawMessage(`{"command":"make"}`)
	call := &llm.Block{Type: llm.BlockToolUse, ToolUseID: "u1", Name: "Bash", Input: in}
	ev(m, session.Event{Kind: session.KindTurnStarted, Time: t0})
	ev(m, session.Event{Kind: session.KindAgent, Time: t0, Agent: &agent.Event{Type: agent.EventToolUse, Call: call, At: t0}})
	q := session.Question{ID: "q1", Agent: "team-lead", Tool: "Bash", Input: in}
	ev(m, session.Event{Kind: session.KindPermission, Time: t0.Add(time.Second), Question: &q})
	m.convo.width = 80
	if l := ansi.Strip(m.convo.render(m.st, len(m.convo.entries)-1, t0.Add(5*time.Second))[0]); !strings.Contains(l, "waiting for your answer") {
		t.Errorf("while asked: %q", l)
	}
	ev(m, session.Event{Kind: session.KindPermissionAnswer, Time: t0.Add(11 * time.Second), Question: &q, Verdict: &session.Verdict{Allow: true}})
	res := &llm.Block{Type: llm.BlockToolResult, ToolUseID: "u1", Text: ""}
	ev(m, session.Event{Kind: session.KindAgent, Time: t0.Add(11500 * time.Millisecond), Agent: &agent.Event{Type: agent.EventToolResult, Call: call, ToolResult: res, Elapsed: 11500 * time.Millisecond}})
	i := 0
	for j, e := range m.convo.entries {
		if e.kind == entryTool {
			i = j
		}
	}
	if l := ansi.Strip(m.convo.render(m.st, i, t0.Add(12*time.Second))[0]); !strings.HasSuffix(l, "Bash(make)  ⎿ ok 1.5s") {
		t.Errorf("the finished call: %q; want it to end with Bash(make)  ⎿ ok 1.5s", l)
	}
}
