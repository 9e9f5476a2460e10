package tui

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/session"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/transcript"
)

var update = flag.Bool("update", false, "rewrite the golden frames")

// recorder is a Driver that records what the model asks of the session.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf(format, args...))
}

func (r *recorder) Submit(_ context.Context, p string) { r.add("submit %s", p) }
func (r *recorder) Interrupt() bool                    { r.add("interrupt"); return true }
func (r *recorder) Background(context.Context) (task.ID, error) {
	r.add("background")
	return "a00000001", nil
}
func (r *recorder) Foreground(_ context.Context, id task.ID) error {
	r.add("foreground %s", id)
	return nil
}
func (r *recorder) Answer(id string, v session.Verdict) error {
	if v.Answers != nil {
		r.add("answer %s allow=%v answers=%s msg=%q", id, v.Allow, answersText(v.Answers), v.Message)
		return nil
	}
	r.add("answer %s allow=%v always=%v rule=%q msg=%q", id, v.Allow, v.Always, v.Rule, v.Message)
	return nil
}
func (r *recorder) SendTo(_ context.Context, to, text string) error {
	r.add("send %s %s", to, text)
	return nil
}
func (r *recorder) Stop(_ context.Context, id string) (task.State, error) {
	r.add("stop %s", id)
	return task.State{}, nil
}
func (r *recorder) SetMode(mode string) error     { r.add("mode %s", mode); return nil }
func (r *recorder) Compact(context.Context) error { r.add("compact"); return nil }
func (r *recorder) Clear() error                  { r.add("clear"); return nil }
func (r *recorder) SetModel(name string) error    { r.add("model %s", name); return nil }
func (r *recorder) Model() string                 { return "" }
func (r *recorder) Rules() (allow, ask, deny []permission.Rule) {
	return []permission.Rule{{Tool: "Bash", Specifier: "npm test", Source: "/w/.troupe/settings.local.json"}}, nil,
		[]permission.Rule{{Tool: "Read", Specifier: "./.env", Source: "/home/u/.troupe/settings.json"}}
}
func (r *recorder) AddRule(b permission.Behavior, rule string) error {
	r.add("add %s %s", b, rule)
	return nil
}
func (r *recorder) RemoveRule(b permission.Behavior, rule string) (string, error) {
	r.add("remove %s %s", b, rule)
	return "", nil
}
func (r *recorder) InterruptTeammate(name string) (bool, error) {
	r.add("interrupt %s", name)
	return true, nil
}

var t0 = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

func newTest(t *testing.T) (*model, *recorder) {
	t.Helper()
	r := &recorder{}
	m := newModel(context.Background(), r, Options{NoColor: true, Now: func() time.Time { return t0 },
		Commands: map[string]string{"review": "review the diff"},
		Cost: func(u llm.Usage) (float64, bool) {
			return float64(u.InputTokens)*3/1e6 + float64(u.OutputTokens)*15/1e6, true
		}})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	return m, r
}

// run executes a command and the commands it returns (a batch is not
// used by the model), as the program would.
func run(cmd tea.Cmd) tea.Msg {
	if cmd == nil {
		return nil
	}
	return cmd()
}

func press(m *model, keys ...string) []tea.Msg {
	var msgs []tea.Msg
	for _, k := range keys {
		var km tea.KeyPressMsg
		switch k {
		case "enter":
			km = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			km = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "up":
			km = tea.KeyPressMsg{Code: tea.KeyUp}
		case "down":
			km = tea.KeyPressMsg{Code: tea.KeyDown}
		case "tab":
			km = tea.KeyPressMsg{Code: tea.KeyTab}
		case "shift+tab":
			km = tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
		case "shift+down":
			km = tea.KeyPressMsg{Code: tea.KeyDown, Mod: tea.ModShift}
		case "shift+up":
			km = tea.KeyPressMsg{Code: tea.KeyUp, Mod: tea.ModShift}
		case "ctrl+c":
			km = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
		case "ctrl+b":
			km = tea.KeyPressMsg{Code: 'b', Mod: tea.ModCtrl}
		case "ctrl+j":
			km = tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl}
		case "pgup":
			km = tea.KeyPressMsg{Code: tea.KeyPgUp}
		case "pgdown":
			km = tea.KeyPressMsg{Code: tea.KeyPgDown}
		case "end":
			km = tea.KeyPressMsg{Code: tea.KeyEnd}
		case "home":
			km = tea.KeyPressMsg{Code: tea.KeyHome}
		case "backspace":
			km = tea.KeyPressMsg{Code: tea.KeyBackspace}
		case "ctrl+x":
			km = tea.KeyPressMsg{Code: 'x', Mod: tea.ModCtrl}
		case "ctrl+home":
			km = tea.KeyPressMsg{Code: tea.KeyHome, Mod: tea.ModCtrl}
		case "ctrl+end":
			km = tea.KeyPressMsg{Code: tea.KeyEnd, Mod: tea.ModCtrl}
		case "ctrl+o":
			km = tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl}
		case "ctrl+t":
			km = tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl}
		default:
			for _, r := range k {
				_, cmd := m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
				if msg := run(cmd); msg != nil {
					msgs = append(msgs, msg)
					m.Update(msg)
				}
			}
			continue
		}
		_, cmd := m.Update(km)
		if msg := run(cmd); msg != nil {
			msgs = append(msgs, msg)
			m.Update(msg)
		}
	}
	return msgs
}

func ev(m *model, e session.Event) {
	if e.Time.IsZero() {
		e.Time = t0
	}
	m.Update(eventMsg{e})
}

func agentEv(m *model, e agent.Event) { ev(m, session.Event{Kind: session.KindAgent, Agent: &e}) }

// golden compares the frame with testdata/NAME.golden (-update rewrites).
func golden(t *testing.T, m *model, name string) {
	t.Helper()
	got := m.frame()
	lines := strings.Split(got, "\n")
	if len(lines) != m.height {
		t.Errorf("%s: %d lines, want the window's %d", name, len(lines), m.height)
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > m.width {
			t.Errorf("%s: line %d is %d cells wide, more than %d: %q", name, i, w, m.width, l)
		}
	}
	path := filepath.Join("testdata", name+".golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./tui -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s frame differs (-want +got):\n%s", name, diff)
	}
}

// conversation plays a turn: a prompt, a streamed answer, tool calls.
func conversation(m *model) {
	press(m, "hello there", "enter")
	ev(m, session.Event{Kind: session.KindTurnStarted, Text: "hello there"})
	for _, d := range []string{"Here is **the plan**:\n", "- read `main.go`\n", "- run the tests\n"} {
		agentEv(m, agent.Event{Type: agent.EventDelta, Text: d})
	}
	msg := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("Here is **the plan**:\n- read `main.go`\n- run the tests\n")}}
	ev(m, session.Event{Kind: session.KindText, Agent: &agent.Event{Type: agent.EventAssistant, Message: &msg, Usage: &llm.Usage{InputTokens: 1200, OutputTokens: 34}}})
	call := llm.ToolUse("c1", "Read", json.RawMessage(`{"file_path":"/w/main.go"}`))
	ev(m, session.Event{Kind: session.KindToolStart, Agent: &agent.Event{Type: agent.EventToolUse, Call: &call, At: t0}})
	res := llm.Block{Type: llm.BlockToolResult, ToolUseID: "c1", Text: "package main"}
	ev(m, session.Event{Kind: session.KindToolResult, Agent: &agent.Event{Type: agent.EventToolResult, ToolResult: &res, Elapsed: 12 * time.Millisecond}})
	call2 := llm.ToolUse("c2", "Bash", json.RawMessage(`{"command":"go test ./..."}`))
	ev(m, session.Event{Kind: session.KindToolStart, Agent: &agent.Event{Type: agent.EventToolUse, Call: &call2, At: t0}})
	res2 := llm.Block{Type: llm.BlockToolResult, ToolUseID: "c2", Text: "FAIL: TestX\nmore", IsError: true}
	ev(m, session.Event{Kind: session.KindToolResult, Agent: &agent.Event{Type: agent.EventToolResult, ToolResult: &res2, Elapsed: 2300 * time.Millisecond}})
}

func teammates(m *model) {
	for i, n := range []string{"alice", "bob", "carol"} {
		st := task.State{ID: task.ID(fmt.Sprintf("t0000000%d", i)), Type: task.InProcessTeammate, Status: task.Running, Start: t0, Description: "teammate " + n,
			Detail: &task.Teammate{AgentName: n, TeamName: "web", Model: "opus", Color: []string{"blue", "green", "red"}[i], Idle: i == 2,
				Recent: []string{"Reading a.go", "Running go test ./..."}, Usage: task.Usage{ToolUses: 4 + i, TotalTokens: 12000}, Prompt: "fix the " + n + " bug"}}
		ev(m, session.Event{Kind: session.KindTaskStarted, Task: &task.Event{Kind: task.EventStarted, State: st}})
	}
	ev(m, session.Event{Kind: session.KindMessage, Team: &swarm.Event{Time: t0, Agent: "alice", Kind: swarm.EventMessage, Text: "The login bug is in auth.go:42; fixed and tested."}})
	ev(m, session.Event{Kind: session.KindTeammateState, Team: &swarm.Event{Time: t0, Agent: "carol", Kind: swarm.EventIdle, Text: "idle"}})
}

func TestFrames(t *testing.T) {
	t.Run("empty", func(t *testing.T) {
		m, _ := newTest(t)
		golden(t, m, "empty")
	})
	t.Run("conversation", func(t *testing.T) {
		m, _ := newTest(t)
		conversation(m)
		ev(m, session.Event{Kind: session.KindTurnEnded, Result: &agent.Result{Text: "done"}})
		golden(t, m, "conversation")
	})
	t.Run("working", func(t *testing.T) {
		m, _ := newTest(t)
		conversation(m)
		m.Update(tickMsg(t0.Add(7 * time.Second)))
		press(m, "and then?", "enter") // typed while the lead works: queued
		golden(t, m, "working")
	})
	t.Run("team", func(t *testing.T) {
		m, _ := newTest(t)
		conversation(m)
		teammates(m)
		sh := task.State{ID: "b00000001", Type: task.LocalBash, Status: task.Running, Start: t0, Description: "npm run dev", Detail: &task.Shell{Command: "npm run dev"}}
		ev(m, session.Event{Kind: session.KindTaskStarted, Task: &task.Event{Kind: task.EventStarted, State: sh}})
		press(m, "shift+down", "shift+down")
		golden(t, m, "team")
	})
	t.Run("permission", func(t *testing.T) {
		m, _ := newTest(t)
		conversation(m)
		teammates(m)
		q1 := session.Question{ID: "q1", Agent: "bob", Color: "green", Tool: "Edit", Teammate: true, Reason: "edits need approval in default mode",
			Input: json.RawMessage(`{"file_path":"/w/auth.go","old_string":"if u == nil {\n\treturn nil\n}","new_string":"if u == nil {\n\treturn ErrNoUser\n}"}`), Always: "Edit(//w/auth.go)"}
		q2 := session.Question{ID: "q2", Agent: "team-lead", Tool: "Bash", Input: json.RawMessage(`{"command":"rm -rf build"}`)}
		ev(m, session.Event{Kind: session.KindPermission, Question: &q1, Queued: 1})
		ev(m, session.Event{Kind: session.KindPermission, Question: &q2, Queued: 2})
		golden(t, m, "permission")
		press(m, "3", "use the error")
		golden(t, m, "permission-feedback")
	})
	t.Run("plan", func(t *testing.T) {
		m, r := newTest(t)
		teammates(m)
		q := session.Question{ID: "p1", Agent: "bob", Color: "green", Teammate: true, Reason: "plan plan_approval-1@bob@web",
			Plan: "# Plan\n1. Add **ErrNoUser** to auth.go\n2. Return it from Login\n3. Test both paths"}
		ev(m, session.Event{Kind: session.KindPermission, Question: &q, Queued: 1})
		golden(t, m, "plan")
		press(m, "3", "test the error message too", "enter")
		if want := []string{`answer p1 allow=false always=false rule="" msg="test the error message too"`}; !cmp.Equal(want, r.calls) {
			t.Errorf("calls %q, want %q", r.calls, want)
		}
	})
	t.Run("teammate", func(t *testing.T) {
		m, _ := newTest(t)
		teammates(m)
		press(m, "shift+down", "enter")
		golden(t, m, "teammate")
	})
	t.Run("tasks", func(t *testing.T) {
		m, _ := newTest(t)
		teammates(m)
		sh := task.State{ID: "b00000001", Type: task.LocalBash, Status: task.Completed, Start: t0, End: t0.Add(3 * time.Second), Description: "go build ./...", OutputFile: "/tmp/out/b00000001.output",
			Detail: &task.Shell{Command: "go build ./...", Exited: true}}
		ev(m, session.Event{Kind: session.KindTaskEnded, Task: &task.Event{Kind: task.EventTerminated, State: sh}})
		ag := task.State{ID: "a00000001", Type: task.LocalAgent, Status: task.Running, Start: t0, Description: "explore the auth code", Detail: &task.Agent{Prompt: "find where sessions expire", AgentType: "Explore"}}
		ev(m, session.Event{Kind: session.KindTaskStarted, Task: &task.Event{Kind: task.EventStarted, State: ag}})
		m.Update(tickMsg(t0.Add(12 * time.Second)))
		press(m, "down")
		if m.screen != screenTasks {
			t.Fatalf("Down on an empty prompt: screen %d, want the task list", m.screen)
		}
		press(m, "down", "down", "down")
		golden(t, m, "tasks")
		press(m, "enter")
		golden(t, m, "task-shell")
		dr := task.State{ID: "d00000001", Type: task.Dream, Status: task.Running, Start: t0, Description: "dream",
			Detail: &task.DreamDetail{Phase: "updating", SessionsReviewing: 3, FilesTouched: []string{"MEMORY.md", "testing.md"}}}
		ev(m, session.Event{Kind: session.KindTaskStarted, Task: &task.Event{Kind: task.EventStarted, State: dr}})
		press(m, "esc", "down", "down", "down", "down", "down", "enter")
		golden(t, m, "task-dream")
	})
	t.Run("resumed", func(t *testing.T) {
		r := &recorder{}
		hist := []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{llm.Text("fix the build")}},
			{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("Looking."), llm.ToolUse("u1", "Bash", json.RawMessage(`{"command":"go build ./..."}`))}},
			{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "u1", Text: "ok"}}},
			{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("It builds now.")}},
		}
		m := newModel(context.Background(), r, Options{NoColor: true, Now: func() time.Time { return t0 }, History: hist,
			Sessions: func() []SessionInfo {
				return []SessionInfo{{ID: "s-older", When: t0.Add(-time.Hour), Prompt: "add a flag"}, {ID: "s-oldest", When: t0.Add(-48 * time.Hour), Prompt: "write docs\nand more"}}
			}})
		m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
		golden(t, m, "resumed")
		press(m, "/resume", "enter")
		golden(t, m, "resume-list")
		press(m, "down", "enter")
		if m.resume != "s-oldest" || !m.quitting {
			t.Errorf("picking the second session: resume %q, quitting %v", m.resume, m.quitting)
		}
	})
	t.Run("resume fails", func(t *testing.T) {
		r := &recorder{}
		m := newModel(context.Background(), r, Options{NoColor: true, Now: func() time.Time { return t0 },
			Sessions: func() []SessionInfo {
				return []SessionInfo{{ID: "s-broken", When: t0.Add(-time.Hour), Prompt: "add a flag"}}
			},
			CheckResume: func(id string) error {
				return fmt.Errorf("resume session %s: session file /h/%s.jsonl line 2: not a JSON object", id, id)
			}})
		m.Update(tea.WindowSizeMsg{Width: 100, Height: 24})
		press(m, "/resume", "enter")
		if m.screen != screenResume {
			t.Fatalf("/resume: screen %d; want the list", m.screen)
		}
		press(m, "enter")
		if m.resume != "" || m.quitting || m.screen != screenMain {
			t.Fatalf("a session that cannot be opened was picked: resume %q, quitting %v, screen %d; want this session to go on", m.resume, m.quitting, m.screen)
		}
		if f := m.frame(); !strings.Contains(f, "/resume s-broken: resume session s-broken: session file /h/s-broken.jsonl line 2") || !strings.Contains(f, "this session goes on") {
			t.Errorf("the error is not shown:\n%s", f)
		}
		press(m, "next prompt", "enter")
		if !slices.Contains(r.calls, "submit next prompt") {
			t.Errorf("the session does not take a prompt after the failed /resume: %q", r.calls)
		}
	})
	t.Run("permissions", func(t *testing.T) {
		m, r := newTest(t)
		press(m, "/permissions", "enter", "/permissions deny Bash(rm:*)", "enter", "/permissions remove ask Bash(git push)", "enter", "/permissions plan", "enter", "/compact", "enter")
		golden(t, m, "permissions")
		want := []string{"add deny Bash(rm:*)", "remove ask Bash(git push)", "mode plan", "compact"}
		if diff := cmp.Diff(want, r.calls); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
	})
	t.Run("completion", func(t *testing.T) {
		m, _ := newTest(t)
		press(m, "/re")
		golden(t, m, "completion")
	})
}

// Keys reach the session as the right calls.
func TestKeys(t *testing.T) {
	m, r := newTest(t)
	press(m, "hello", "enter")
	ev(m, session.Event{Kind: session.KindTurnStarted, Text: "hello"})
	press(m, "esc", "ctrl+b", "shift+tab")
	teammates(m)
	press(m, "shift+down", "enter", "please rebase", "enter", "esc", "ctrl+x", "ctrl+x")
	if m.screen != screenTeammate {
		t.Errorf("screen %d after opening a teammate, want its view", m.screen)
	}
	press(m, "esc")
	q := session.Question{ID: "q1", Agent: "alice", Tool: "Bash", Input: json.RawMessage(`{"command":"go test ./..."}`), Teammate: true, Always: "Bash(go test ./...)"}
	ev(m, session.Event{Kind: session.KindPermission, Question: &q, Queued: 1})
	press(m, "2")
	q2 := session.Question{ID: "q2", Agent: "team-lead", Tool: "Bash", Input: json.RawMessage(`{"command":"rm x"}`)}
	ev(m, session.Event{Kind: session.KindPermission, Question: &q2, Queued: 1})
	press(m, "3", "delete y instead", "enter")
	q3 := session.Question{ID: "q3", Agent: "team-lead", Tool: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}
	ev(m, session.Event{Kind: session.KindPermission, Question: &q3, Queued: 1})
	press(m, "1")
	want := []string{
		"submit hello",
		"interrupt",
		"background",
		"mode acceptEdits",
		"send alice please rebase",
		"interrupt alice",
		"stop t00000000",
		`answer q1 allow=true always=true rule="Bash(go test ./...)" msg=""`,
		`answer q2 allow=false always=false rule="" msg="delete y instead"`,
		`answer q3 allow=true always=false rule="" msg=""`,
	}
	if diff := cmp.Diff(want, r.calls); diff != "" {
		t.Errorf("session calls (-want +got):\n%s", diff)
	}
}

// History, Ctrl+C and a queued prompt.
func TestPromptKeys(t *testing.T) {
	m, r := newTest(t)
	press(m, "one", "enter", "two", "enter", "up", "up")
	if v := m.input.Value(); v != "one" {
		t.Errorf("Up twice: prompt %q, want the first one", v)
	}
	press(m, "down")
	if v := m.input.Value(); v != "two" {
		t.Errorf("Down: prompt %q", v)
	}
	press(m, "ctrl+c")
	if m.input.Value() != "" || m.quitting {
		t.Errorf("Ctrl+C with text: prompt %q, quitting %v; want it cleared", m.input.Value(), m.quitting)
	}
	press(m, "a", "ctrl+j", "b")
	if v := m.input.Value(); v != "a\nb" {
		t.Errorf("Ctrl+J: prompt %q, want two lines", v)
	}
	press(m, "ctrl+c", "ctrl+c")
	if m.quitting {
		t.Error("Ctrl+C on an empty prompt quit at once; the second one within 2 s quits")
	}
	m.Update(tickMsg(t0.Add(5 * time.Second)))
	press(m, "ctrl+c")
	if m.quitting {
		t.Error("a Ctrl+C 5 s after the first quit")
	}
	press(m, "ctrl+c")
	if !m.quitting {
		t.Error("two Ctrl+C within 2 s did not quit")
	}
	if len(r.calls) != 2 {
		t.Errorf("calls %v", r.calls)
	}
	// A prompt typed while the lead works waits below its answer, never
	// inside it, until the lead takes it.
	m2, _ := newTest(t)
	ev(m2, session.Event{Kind: session.KindTurnStarted, Text: "x"})
	agentEv(m2, agent.Event{Type: agent.EventDelta, Text: "first half "})
	press(m2, "later", "enter")
	agentEv(m2, agent.Event{Type: agent.EventDelta, Text: "second half"})
	if n := len(m2.convo.entries); n != 1 || m2.convo.entries[0].text != "first half second half" {
		t.Fatalf("the answer was split by the waiting prompt: %d entries", n)
	}
	if f := m2.frame(); !strings.Contains(f, "> (waiting) later") {
		t.Errorf("the waiting prompt is not below the answer:\n%s", f)
	}
	agentEv(m2, agent.Event{Type: agent.EventAssistant, Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("first half second half")}}})
	u := llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("later")}}
	agentEv(m2, agent.Event{Type: agent.EventUser, Message: &u})
	if e := m2.convo.entries[len(m2.convo.entries)-1]; e.kind != entryUser || e.text != "later" || len(m2.pending) != 0 {
		t.Error("the waiting prompt is not in the conversation after the lead took it")
	}
}

// The window is filled exactly at any size, and resizing re-wraps.
func TestResize(t *testing.T) {
	m, _ := newTest(t)
	conversation(m)
	teammates(m)
	for _, sz := range [][2]int{{80, 24}, {40, 12}, {200, 50}, {20, 8}} {
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		lines := strings.Split(m.frame(), "\n")
		if len(lines) != m.height {
			t.Errorf("%dx%d: %d lines", sz[0], sz[1], len(lines))
		}
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > m.width {
				t.Errorf("%dx%d: a line of %d cells: %q", sz[0], sz[1], w, l)
			}
		}
	}
}

// A large paste is taken whole (the prompt shows a third of the window).
func TestPaste(t *testing.T) {
	m, r := newTest(t)
	var b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&b, "line %d of a long log\n", i)
	}
	m.Update(tea.PasteMsg{Content: b.String()})
	if got := m.input.Value(); got != b.String() {
		t.Fatalf("the prompt holds %d bytes of the %d pasted", len(got), b.Len())
	}
	if h := m.input.Height(); h > m.height/3 {
		t.Errorf("the prompt is %d lines high in a %d-line window", h, m.height)
	}
	press(m, "enter")
	if len(r.calls) != 1 || !strings.HasSuffix(r.calls[0], "line 499 of a long log") {
		t.Errorf("the pasted prompt was not sent whole: %d calls", len(r.calls))
	}
}

// In a teammate's view every printable key types: "is it safe?" and
// "xylophone" reach the teammate whole; Esc interrupts it, Ctrl+X twice
// (or /stop) stops it, Ctrl+X then another key does not.
func TestTeammateViewTyping(t *testing.T) {
	m, r := newTest(t)
	teammates(m)
	press(m, "shift+down", "enter", "is it safe?", "enter", "xylophone", "enter", "i", "x", "backspace", "backspace", "esc", "ctrl+x", "y", "backspace")
	want := []string{"send alice is it safe?", "send alice xylophone", "interrupt alice"}
	if diff := cmp.Diff(want, r.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if m.screen != screenTeammate {
		t.Fatalf("screen %d; want the teammate's view still", m.screen)
	}
	press(m, "/stop", "enter")
	if got := r.calls[len(r.calls)-1]; got != "stop t00000000" {
		t.Errorf("/stop: last call %q", got)
	}
	m.Update(tickMsg(t0.Add(10 * time.Second)))
	press(m, "esc", "esc")
	if m.screen != screenMain || m.input.Value() != "" {
		t.Errorf("Esc twice: screen %d, prompt %q; want the conversation and an empty prompt", m.screen, m.input.Value())
	}
}

// Ctrl+C interrupts a running turn first, clears the prompt second, and
// quits only twice on an idle, empty prompt; its notice shows above the
// spinner. Up/Down keep the unsent draft.
func TestCtrlCAndDraft(t *testing.T) {
	m, r := newTest(t)
	ev(m, session.Event{Kind: session.KindTurnStarted, Text: "go"})
	press(m, "typed", "ctrl+c")
	if len(r.calls) == 0 || r.calls[len(r.calls)-1] != "interrupt" {
		t.Errorf("Ctrl+C while working: calls %v; want an interrupt", r.calls)
	}
	if m.input.Value() != "typed" || m.quitting {
		t.Errorf("Ctrl+C while working cleared the prompt (%q) or quit", m.input.Value())
	}
	if f := m.frame(); !strings.Contains(f, "Interrupting the lead's turn") || !strings.Contains(f, "Esc to interrupt") {
		t.Errorf("the notice is not above the spinner:\n%s", f)
	}
	ev(m, session.Event{Kind: session.KindTurnEnded, Result: &agent.Result{Interrupted: true}})
	press(m, "ctrl+c")
	if m.input.Value() != "" || m.quitting {
		t.Errorf("second Ctrl+C: prompt %q quitting %v; want cleared", m.input.Value(), m.quitting)
	}
	press(m, "ctrl+c", "ctrl+c")
	if !m.quitting {
		t.Error("two Ctrl+C on an idle, empty prompt did not quit")
	}

	// In a teammate's view, with the lead working, Ctrl+C never quits.
	m, r = newTest(t)
	teammates(m)
	ev(m, session.Event{Kind: session.KindTurnStarted, Text: "go"})
	press(m, "shift+down", "enter", "ctrl+c", "ctrl+c", "ctrl+c")
	if m.quitting || slices.Contains(r.calls, "interrupt") {
		t.Errorf("Ctrl+C in a teammate's view with the lead working: quitting %v, calls %v", m.quitting, r.calls)
	}

	m, _ = newTest(t)
	press(m, "one", "enter", "half-written", "up")
	if v := m.input.Value(); v != "one" {
		t.Errorf("Up: prompt %q", v)
	}
	press(m, "down")
	if v := m.input.Value(); v != "half-written" {
		t.Errorf("Down past the newest: prompt %q; want the draft back", v)
	}
}

// A teammate's view reads its transcript while open, from where the last
// read ended, and shows what it wrote whole, its calls and their results;
// no read happens with the view closed.
func TestTeammateViewTranscript(t *testing.T) {
	m, _ := newTest(t)
	var mu sync.Mutex
	var reads []string
	lines := []transcript.Line{
		{Type: agent.EventUser, Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("fix the alice bug\nmore")}}},
		{Type: agent.EventAssistant, Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("The bug is in auth.go: the token check runs after the redirect, so I will move it before.")}}},
		{Type: agent.EventToolUse, Call: &llm.Block{Type: llm.BlockToolUse, Name: "Edit", Input: json.RawMessage(`{"file_path":"auth.go"}`)}},
		{Type: agent.EventToolResult, ToolResult: &llm.Block{Type: llm.BlockToolResult, Text: "\x1b[31mno match\x1b[0m", IsError: true}, ElapsedMS: 12},
	}
	m.opts.Transcript = func(name string, from int64) ([]transcript.Line, int64, error) {
		mu.Lock()
		defer mu.Unlock()
		reads = append(reads, fmt.Sprintf("%s@%d", name, from))
		if from == 0 {
			return lines, 100, nil
		}
		return nil, from, nil
	}
	teammates(m)
	if cmd := m.readMate(); cmd != nil {
		t.Fatal("a transcript read with no teammate view open")
	}
	press(m, "shift+down", "enter") // opening the view reads at once
	for range 1 {
		_, cmd := m.Update(tickMsg(t0))
		if cmd == nil {
			t.Fatal("no transcript read on a tick with the view open")
		}
		m.Update(cmd())
	}
	if want := []string{"alice@0", "alice@100"}; !slices.Equal(reads, want) {
		t.Errorf("reads %q; want %q (the second from where the first ended)", reads, want)
	}
	frame := m.frame()
	for _, want := range []string{"> fix the alice bug", "the token check runs after the redirect", `✗ Update(auth.go)  ⎿ \x1b[31mno match\x1b[0m 12ms`} {
		if !strings.Contains(ansi.Strip(frame), want) {
			t.Errorf("the teammate's view lacks %q:\n%s", want, frame)
		}
	}
	if strings.Contains(frame, "\x1b[31m") {
		t.Errorf("a terminal escape from the transcript reached the screen:\n%q", frame)
	}
}

// The lead's Markdown: a table in aligned columns (a wide one cut to the
// screen), links with their address, numbered items and quotes with a
// hanging indent.
func TestMarkdown(t *testing.T) {
	st := newStyles(true)
	got := markdown(st, strings.Join([]string{
		"| name | state | **tokens** |",
		"|------|:-----:|-----------|",
		"| alice | working | 12k |",
		"| bob | idle | `3k` |",
		"See [the docs](https://example.com/docs) or https://x.dev, [https://a.b](https://a.b).",
		"1. First a long item that wraps onto the next line of this narrow screen",
		"> quoted words that also wrap around here",
	}, "\n"), 40)
	want := []string{
		"│ name  │ state   │ tokens │",
		"├───────┼─────────┼────────┤",
		"│ alice │ working │ 12k    │",
		"│ bob   │ idle    │ 3k     │",
		"See the docs (https://example.com/docs)",
		"or https://x.dev, https://a.b.",
		"1. First a long item that wraps onto",
		"   the next line of this narrow screen",
		"│ quoted words that also wrap around",
		"│ here",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("markdown (-want +got):\n%s", diff)
	}
	wide := markdown(st, "| a | b |\n|---|---|\n| "+strings.Repeat("x", 60)+" | short |", 30)
	for _, l := range wide {
		if w := ansi.StringWidth(l); w > 30 {
			t.Errorf("a table line %d wide on a 30-column screen: %q", w, l)
		}
	}
	if !strings.Contains(wide[2], "…") {
		t.Errorf("the wide cell is not cut: %q", wide)
	}
}
