package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/tool"
)

// fakeTool is a tool whose behaviour a test sets.
type fakeTool struct {
	name string
	ro   bool
	run  func(ctx context.Context, c tool.Call) (tool.Result, error)
}

func (f *fakeTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: f.name, Description: f.name, InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (f *fakeTool) ReadOnly(json.RawMessage) bool { return f.ro }
func (f *fakeTool) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	return f.run(ctx, c)
}

func script(t *testing.T, js string) *scripted.Model {
	t.Helper()
	s, err := scripted.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return scripted.New(s)
}

func newAgent(t *testing.T, cfg Config, tools ...tool.Tool) *Agent {
	t.Helper()
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tools = reg
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Kill)
	return a
}

// wellFormed checks that every tool_use has exactly one result in the next
// message.
func wellFormed(t *testing.T, msgs []llm.Message) {
	t.Helper()
	for i, m := range msgs {
		uses := m.ToolUses()
		if len(uses) == 0 {
			continue
		}
		if i+1 >= len(msgs) {
			t.Fatalf("message %d has tool uses and nothing after it", i)
		}
		got := map[string]int{}
		for _, b := range msgs[i+1].Content {
			if b.Type == llm.BlockToolResult {
				got[b.ToolUseID]++
			}
		}
		for _, u := range uses {
			if got[u.ToolUseID] != 1 {
				t.Errorf("tool use %s has %d results; want 1", u.ToolUseID, got[u.ToolUseID])
			}
		}
	}
}

func TestToolRoundTrip(t *testing.T) {
	m := script(t, `{"turns": [
	  {"match": {"turn": 0}, "reply": {"text": "reading", "tool_calls": [{"name": "Echo", "input": {"v": 1}}]}},
	  {"match": {"tool_result": "Echo", "user": "echo:{\"v\": 1}"}, "reply": {"text": "done: 1"}}]}`)
	echo := &fakeTool{name: "Echo", ro: true, run: func(_ context.Context, c tool.Call) (tool.Result, error) {
		return tool.Result{Content: "echo:" + string(c.Input)}, nil
	}}
	var trans bytes.Buffer
	a := newAgent(t, Config{Model: m, Transcript: &trans}, echo)
	res, err := a.Run(t.Context(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "done: 1" || res.Calls != 2 || res.ToolUses != 1 || res.StopReason != llm.StopEndTurn {
		t.Errorf("Run = %+v; want text %q after 2 calls and 1 tool use", res, "done: 1")
	}
	wellFormed(t, a.Messages())
	lines := strings.Split(strings.TrimSpace(trans.String()), "\n")
	var types []string
	for _, l := range lines {
		var e struct{ Type string }
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("transcript line %q: %v", l, err)
		}
		types = append(types, e.Type)
	}
	want := "user assistant tool_use tool_result user assistant result"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("transcript events = %q; want %q", got, want)
	}
	if p := a.Progress(); p.ToolUses != 1 || len(p.Recent) != 1 || p.Recent[0].Tool != "Echo" {
		t.Errorf("Progress = %+v; want one Echo activity", p)
	}
}

func TestReadOnlyParallelWritesInOrder(t *testing.T) {
	m := script(t, `{"turns": [
	  {"match": {"turn": 0}, "reply": {"tool_calls": [
	    {"id": "r1", "name": "R"}, {"id": "r2", "name": "R"},
	    {"id": "w1", "name": "W", "input": {"n": 1}}, {"id": "w2", "name": "W", "input": {"n": 2}},
	    {"id": "r3", "name": "R"}]}},
	  {"match": {"turn": 1}, "reply": {"text": "ok"}}]}`)
	var inReads atomic.Int32
	bothIn := make(chan struct{})
	var once sync.Once
	r := &fakeTool{name: "R", ro: true, run: func(ctx context.Context, c tool.Call) (tool.Result, error) {
		if c.ID == "r3" {
			return tool.Result{Content: "r3"}, nil
		}
		if inReads.Add(1) == 2 {
			once.Do(func() { close(bothIn) })
		}
		select { // the two reads must overlap: each waits for the other
		case <-bothIn:
		case <-time.After(10 * time.Second):
			return tool.Errorf("read-only calls did not run in parallel"), nil
		}
		return tool.Result{Content: c.ID}, nil
	}}
	var mu sync.Mutex
	var order []string
	writing := false
	w := &fakeTool{name: "W", run: func(_ context.Context, c tool.Call) (tool.Result, error) {
		mu.Lock()
		if writing {
			t.Errorf("two writing calls overlapped")
		}
		writing = true
		order = append(order, c.ID)
		mu.Unlock()
		time.Sleep(5 * time.Millisecond) // give an overlap a chance to show
		mu.Lock()
		writing = false
		mu.Unlock()
		return tool.Result{Content: c.ID}, nil
	}}
	a := newAgent(t, Config{Model: m}, r, w)
	if _, err := a.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(order, ",") != "w1,w2" {
		t.Errorf("writes ran in order %v; want w1,w2", order)
	}
	msgs := a.Messages()
	var ids []string
	for _, b := range msgs[2].Content {
		if b.IsError {
			t.Errorf("result %s is an error: %s", b.ToolUseID, b.Text)
		}
		ids = append(ids, b.ToolUseID)
	}
	if strings.Join(ids, ",") != "r1,r2,w1,w2,r3" {
		t.Errorf("results in order %v; want the model's order", ids)
	}
}

func TestInterruptTurnThenContinue(t *testing.T) {
	m := script(t, `{"turns": [
	  {"match": {"user": "first"}, "reply": {"tool_calls": [{"id": "b1", "name": "Block"}, {"id": "b2", "name": "Block"}]}},
	  {"match": {"user": "second"}, "reply": {"text": "still here"}}]}`)
	started := make(chan struct{}, 2)
	block := &fakeTool{name: "Block", run: func(ctx context.Context, c tool.Call) (tool.Result, error) {
		started <- struct{}{}
		<-ctx.Done()
		return tool.Result{}, context.Cause(ctx)
	}}
	a := newAgent(t, Config{Model: m}, block)
	done := make(chan Result)
	go func() {
		res, err := a.Run(t.Context(), "first")
		if err != nil {
			t.Errorf("interrupted Run error = %v; want nil", err)
		}
		done <- res
	}()
	<-started
	if !a.Interrupt() {
		t.Fatal("Interrupt() = false during a run")
	}
	res := <-done
	if !res.Interrupted {
		t.Errorf("Result.Interrupted = false; want true")
	}
	wellFormed(t, a.Messages())
	res, err := a.Run(t.Context(), "second")
	if err != nil || res.Text != "still here" {
		t.Fatalf("Run after interrupt = %+v, %v; want the agent to go on", res, err)
	}
}

func TestKill(t *testing.T) {
	m := script(t, `{"turns": [{"reply": {"text": "slow", "delay_ms": 60000}}]}`)
	a := newAgent(t, Config{Model: m})
	errc := make(chan error)
	go func() { _, err := a.Run(t.Context(), "go"); errc <- err }()
	for !a.isRunning() {
		time.Sleep(time.Millisecond)
	}
	a.Kill()
	if err := <-errc; !errors.Is(err, ErrKilled) {
		t.Fatalf("Run after Kill = %v; want ErrKilled", err)
	}
	if _, err := a.Run(t.Context(), "again"); !errors.Is(err, ErrKilled) {
		t.Fatalf("Run on a killed agent = %v; want ErrKilled", err)
	}
}

func (a *Agent) isRunning() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running
}

func TestPendingDrainedAtToolBoundary(t *testing.T) {
	m := script(t, `{"turns": [
	  {"match": {"turn": 0}, "reply": {"tool_calls": [{"name": "Slow"}]}},
	  {"match": {"tool_result": "Slow", "user": "also check the tests"}, "reply": {"text": "noted"}}]}`)
	var a *Agent
	slow := &fakeTool{name: "Slow", run: func(context.Context, tool.Call) (tool.Result, error) {
		a.Send("also check the tests") // arrives while the tool runs
		return tool.Result{Content: "slow done"}, nil
	}}
	a = newAgent(t, Config{Model: m}, slow)
	res, err := a.Run(t.Context(), "go")
	if err != nil || res.Text != "noted" {
		t.Fatalf("Run = %+v, %v; want the pending message delivered with the tool result", res, err)
	}
	if a.Pending() != 0 {
		t.Errorf("Pending() = %d after the run; want 0", a.Pending())
	}
}

func TestCompaction(t *testing.T) {
	m := script(t, `{"turns": [
	  {"match": {"user": "one"}, "reply": {"text": "1", "usage": {"input_tokens": 900, "output_tokens": 200}}},
	  {"match": {"user": "Summarize the conversation"}, "reply": {"text": "SUMMARY: said one"}},
	  {"match": {"user": "SUMMARY: said one"}, "reply": {"text": "2"}}]}`)
	a := newAgent(t, Config{Model: m, CompactAt: 1000, KeepRecent: 1})
	if _, err := a.Run(t.Context(), "one"); err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(t.Context(), "two")
	if err != nil || res.Text != "2" {
		t.Fatalf("Run after threshold = %+v, %v", res, err)
	}
	msgs := a.Messages()
	if len(msgs) != 2 || !strings.Contains(msgs[0].Text(), "SUMMARY: said one") || !strings.Contains(msgs[0].Text(), "two") {
		t.Fatalf("conversation after compaction = %+v; want summary + latest prompt, then the answer", msgs)
	}
	if p := a.Progress(); p.Compactions != 1 {
		t.Errorf("Compactions = %d; want 1", p.Compactions)
	}
}

func TestMaxTurnsAndToolErrors(t *testing.T) {
	m := script(t, `{"turns": [{"reply": {"tool_calls": [{"name": "Nope"}, {"name": "Deny"}]}, "repeat": true}]}`)
	deny := &fakeTool{name: "Deny", run: func(context.Context, tool.Call) (tool.Result, error) {
		t.Error("a denied tool ran")
		return tool.Result{}, nil
	}}
	ap := approverFunc(func(_ context.Context, r Request) (Verdict, error) {
		return Verdict{Allow: r.Tool != "Deny", Reason: "not in this test"}, nil
	})
	a := newAgent(t, Config{Model: m, MaxTurns: 3, Approver: ap}, deny)
	res, err := a.Run(t.Context(), "go")
	if err != nil || res.StopReason != StopMaxTurns || res.Calls != 3 {
		t.Fatalf("Run = %+v, %v; want max_turns after 3 calls", res, err)
	}
	results := a.Messages()[2].Content
	if !results[0].IsError || !strings.Contains(results[0].Text, `no tool named "Nope"`) {
		t.Errorf("unknown tool result = %+v", results[0])
	}
	if !results[1].IsError || !strings.Contains(results[1].Text, "denied: not in this test") {
		t.Errorf("denied tool result = %+v", results[1])
	}
}

type approverFunc func(context.Context, Request) (Verdict, error)

func (f approverFunc) Approve(ctx context.Context, r Request) (Verdict, error) { return f(ctx, r) }

func TestBusyAndProgressWhileRunning(t *testing.T) {
	m := script(t, `{"turns": [{"reply": {"tool_calls": [{"name": "Wait"}]}}, {"reply": {"text": "ok"}}]}`)
	release := make(chan struct{})
	wait := &fakeTool{name: "Wait", run: func(context.Context, tool.Call) (tool.Result, error) {
		<-release
		return tool.Result{Content: "x"}, nil
	}}
	a := newAgent(t, Config{Model: m}, wait)
	done := make(chan error)
	go func() { _, err := a.Run(t.Context(), "go"); done <- err }()
	for a.Progress().ToolUses == 0 {
		time.Sleep(time.Millisecond)
	}
	if _, err := a.Run(t.Context(), "again"); !errors.Is(err, ErrBusy) {
		t.Errorf("concurrent Run = %v; want ErrBusy", err)
	}
	if s := a.Progress().Summary(); !strings.Contains(s, "1 tool uses") || !strings.Contains(s, "Wait") {
		t.Errorf("Summary() = %q", s)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Absorb puts input that came after the last run into the conversation
// without a model call: as a user message of its own after the model's
// reply, or joined to a trailing user message (a run that failed before
// its model call), with an EventUser each time; nothing while running.
func TestAbsorb(t *testing.T) {
	var users []string
	m := script(t, `{"turns":[{"reply":{"text":"done"}},{"reply":{"error":"no model call may start"}}]}`)
	a := newAgent(t, Config{Model: m, OnEvent: func(e Event) {
		if e.Type == EventUser {
			users = append(users, e.Message.Text())
		}
	}})
	if n := a.Absorb(); n != 0 {
		t.Errorf("Absorb with nothing pending = %d", n)
	}
	if _, err := a.Run(t.Context(), "first"); err != nil {
		t.Fatal(err)
	}
	a.Send("the budget is spent")
	if n := a.Absorb(); n != 1 {
		t.Fatalf("Absorb = %d; want 1", n)
	}
	msgs := a.Messages()
	if last := msgs[len(msgs)-1]; last.Role != llm.RoleUser || last.Text() != "the budget is spent" || len(msgs) != 3 {
		t.Errorf("conversation %+v; want the note as a third message, the user's", msgs)
	}
	if a.Pending() != 0 {
		t.Errorf("%d inputs still pending", a.Pending())
	}
	// A run that fails before its model call leaves the user's message
	// last: a later note joins it, so the turns keep alternating.
	if _, err := a.Run(t.Context(), "second"); err == nil {
		t.Fatal("the scripted refusal did not fail the run")
	}
	a.Send("why it ended")
	a.Absorb()
	msgs = a.Messages()
	last := msgs[len(msgs)-1]
	if last.Role != llm.RoleUser || !strings.Contains(last.Text(), "second") || !strings.Contains(last.Text(), "why it ended") {
		t.Errorf("conversation ends %+v; want the note joined to the user's last message", last)
	}
	if got := users[len(users)-1]; got != "why it ended" {
		t.Errorf("last EventUser %q; want the note", got)
	}
}
