package agenttool_test

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	coreagent "github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	taskreg "github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/agenttool"
)

// recorder records every request its model gets.
type recorder struct {
	llm.Model
	mu   sync.Mutex
	reqs []llm.Request
}

func (r *recorder) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Model.Stream(ctx, req)
}

func (r *recorder) requests() []llm.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]llm.Request(nil), r.reqs...)
}

// gate is a tool that blocks until its channel is closed; entered is
// closed when it is first called.
type gate struct {
	entered, open chan struct{}
	once          sync.Once
}

func (*gate) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "Gate", InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (*gate) ReadOnly(json.RawMessage) bool { return true }
func (g *gate) Run(ctx context.Context, _ tool.Call) (tool.Result, error) {
	g.once.Do(func() { close(g.entered) })
	select {
	case <-g.open:
		return tool.Result{Content: "gate passed"}, nil
	case <-ctx.Done():
		return tool.Result{}, context.Cause(ctx)
	}
}

// setupRec returns an Agent tool whose sub-agents run script on a
// recording model with the tools extra, and its SendMessage tool.
func setupRec(t *testing.T, reg *taskreg.Registry, script string, keep int, extra ...tool.Tool) (*agenttool.Tool, *agenttool.SendMessage, *recorder) {
	t.Helper()
	parent, err := tool.NewRegistry(append([]tool.Tool{named("Echo")}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{Model: model(t, script)}
	var allow []string // the test tools, as background sub-agents get only allowed ones
	for _, name := range parent.Names() {
		allow = append(allow, name)
	}
	tl := agenttool.New(agenttool.Config{Tools: parent, Registry: reg, KeepFinished: keep, AsyncAllow: allow,
		Factory: func(_ context.Context, s agenttool.Spec) (coreagent.Config, error) {
			return coreagent.Config{Model: rec, System: "sub-agent", Tools: s.Tools, CompactAt: -1}, nil
		}})
	return tl, agenttool.NewSendMessage(tl), rec
}

func send(t *testing.T, sm tool.Tool, input string) tool.Result {
	t.Helper()
	res, err := sm.Run(t.Context(), tool.Call{ID: "toolu_send", Name: "SendMessage", Input: json.RawMessage(input)})
	if err != nil {
		t.Fatalf("SendMessage(%s) error = %v; want a Result", input, err)
	}
	return res
}

// startBG starts a background agent and returns its id.
func startBG(t *testing.T, tl tool.Tool, input string) taskreg.ID {
	t.Helper()
	res := run(t, tl, input)
	m := idRE.FindStringSubmatch(res.Content)
	if res.IsError || m == nil {
		t.Fatalf("background Agent(%s) = %+v; want an agent id", input, res)
	}
	return taskreg.ID(m[1])
}

// nextNote waits for the next notification of task id.
func nextNote(t *testing.T, sub *taskreg.Subscription, id taskreg.ID) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for the notification of %s: %v", id, err)
		}
		if e.Kind == taskreg.EventTerminated && e.State.ID == id {
			return e.Notification
		}
	}
}

// texts joins the text of every block of m.
func texts(m llm.Message) string {
	var b strings.Builder
	for _, bl := range m.Content {
		b.WriteString(bl.Text)
		b.WriteString("\n")
	}
	return b.String()
}

func TestSendMessageQueuesToRunning(t *testing.T) {
	reg := registry(t)
	sub := reg.Subscribe()
	defer sub.Close()
	g := &gate{entered: make(chan struct{}), open: make(chan struct{})}
	tl, sm, rec := setupRec(t, reg, `{"turns": [
  {"match": {"turn": 0}, "reply": {"tool_calls": [{"name": "Gate", "input": {}}]}},
  {"match": {"tool_result": "Gate"}, "reply": {"text": "GOT-IT"}}
]}`, 0, g)
	id := startBG(t, tl, `{"description": "gated", "prompt": "pass the gate", "run_in_background": true, "name": "gated"}`)
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the sub-agent never called Gate")
	}
	res := send(t, sm, `{"to": "gated", "message": "ALSO-CHECK-THE-TESTS", "summary": "more work"}`)
	if res.IsError || !strings.Contains(res.Content, "queued") || !strings.Contains(res.Content, "next tool-round boundary") {
		t.Errorf("SendMessage to a running agent = %+v; want it queued", res)
	}
	close(g.open)
	n := nextNote(t, sub, id)
	if !strings.Contains(n, "<result>GOT-IT</result>") {
		t.Errorf("notification = %s", n)
	}
	reqs := rec.requests()
	if len(reqs) != 2 {
		t.Fatalf("sub-agent requests = %d; want 2", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if got := texts(last); !strings.Contains(got, "gate passed") || !strings.Contains(got, "ALSO-CHECK-THE-TESTS") {
		t.Errorf("the request after the tool round ends with %q; want the Gate result and the message", got)
	}
}

func TestSendMessageResumesFinished(t *testing.T) {
	reg := registry(t)
	sub := reg.Subscribe()
	defer sub.Close()
	tl, sm, rec := setupRec(t, reg, `{"turns": [
  {"match": {"turn": 0}, "reply": {"text": "Working.", "tool_calls": [{"name": "Echo", "input": {}}], "usage": {"input_tokens": 10, "output_tokens": 5}}},
  {"match": {"tool_result": "Echo"}, "reply": {"text": "DONE-RESULT", "usage": {"input_tokens": 20, "output_tokens": 7}}},
  {"match": {"user": "NOW-COUNT-AGAIN"}, "reply": {"text": "SECOND-RESULT", "usage": {"input_tokens": 40, "output_tokens": 3}}}
]}`, 0)
	id := startBG(t, tl, `{"description": "count things", "prompt": "count the things", "run_in_background": true, "name": "counter"}`)
	if n := nextNote(t, sub, id); !strings.Contains(n, "<result>DONE-RESULT</result>") {
		t.Fatalf("first notification = %s", n)
	}
	if err := tl.Send("counter", "x"); err == nil {
		t.Error("Send (running agents only) reached a finished agent")
	}

	res := send(t, sm, `{"to": "counter", "message": "NOW-COUNT-AGAIN"}`)
	if res.IsError || !strings.Contains(res.Content, "resumed") || !strings.Contains(res.Content, string(id)) {
		t.Fatalf("SendMessage to a finished agent = %+v; want it resumed", res)
	}
	n := nextNote(t, sub, id)
	for _, want := range []string{"<task-id>" + string(id) + "</task-id>", "<tool-use-id>toolu_send</tool-use-id>",
		"<status>completed</status>", "<result>SECOND-RESULT</result>", "<total_tokens>43</total_tokens>", "<tool_uses>0</tool_uses>"} {
		if !strings.Contains(n, want) {
			t.Errorf("second notification lacks %s:\n%s", want, n)
		}
	}
	for {
		e, ok := sub.TryNext()
		if !ok {
			break
		}
		if e.Kind == taskreg.EventTerminated && e.State.ID == id {
			t.Errorf("a third notification: %+v", e)
		}
	}
	reqs := rec.requests()
	if len(reqs) != 3 {
		t.Fatalf("sub-agent requests = %d; want 3", len(reqs))
	}
	msgs := reqs[2].Messages
	if len(msgs) != 5 || !strings.Contains(texts(msgs[0]), "count the things") || !strings.Contains(texts(msgs[3]), "DONE-RESULT") ||
		!strings.Contains(texts(msgs[4]), "NOW-COUNT-AGAIN") {
		t.Errorf("the resumed run's request has %d messages: %+v; want the first conversation and the new message", len(msgs), msgs)
	}
	s, _ := reg.Get(id)
	if d := s.Detail.(*taskreg.Agent); s.Status != taskreg.Completed || d.Result != "SECOND-RESULT" || d.Prompt != "NOW-COUNT-AGAIN" || len(d.Messages) != 6 {
		t.Errorf("task after the resume = %s %+v", s.Status, d)
	}
}

func TestSendMessageResumesStopped(t *testing.T) {
	reg := registry(t)
	sub := reg.Subscribe()
	defer sub.Close()
	tl, sm, _ := setupRec(t, reg, `{"turns": [
  {"match": {"turn": 0}, "reply": {"text": "slow", "delay_ms": 60000}},
  {"match": {"user": "WAKE-UP"}, "reply": {"text": "AWAKE"}}
]}`, 0)
	id := startBG(t, tl, `{"description": "slow one", "prompt": "take your time", "run_in_background": true}`)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if s, err := reg.Stop(ctx, id); err != nil || s.Status != taskreg.Killed {
		t.Fatalf("Stop = %s, %v", s.Status, err)
	}
	if res := send(t, sm, `{"to": "`+string(id)+`", "message": "WAKE-UP"}`); res.IsError {
		t.Fatalf("SendMessage to a stopped agent = %+v", res)
	}
	var n string
	for n == "" { // the stop's silent termination comes first
		n = nextNote(t, sub, id)
	}
	if !strings.Contains(n, "<result>AWAKE</result>") || !strings.Contains(n, "<status>completed</status>") {
		t.Errorf("notification of the resumed agent = %s", n)
	}
}

func TestSendMessageErrors(t *testing.T) {
	reg := registry(t)
	sub := reg.Subscribe()
	defer sub.Close()
	tl, sm, _ := setupRec(t, reg, subScript, 0)
	if res := send(t, sm, `{"to": "nobody", "message": "hi"}`); !res.IsError || !strings.Contains(res.Content, "none has been started") {
		t.Errorf("SendMessage with no agents = %+v", res)
	}
	id := startBG(t, tl, `{"description": "count things", "prompt": "count the things", "run_in_background": true, "name": "counter"}`)
	nextNote(t, sub, id)
	tests := []struct {
		input string
		want  []string
	}{
		{`{"to": "nobody", "message": "hi"}`, []string{`no background agent "nobody"`, string(id), "counter"}},
		{`{"to": "counter", "message": {"type": "shutdown_request"}}`, []string{"structured messages", "teammates", "not available"}},
		{`{"to": "counter", "message": 3}`, []string{"message must be a string"}},
		{`{"to": "counter", "message": "  "}`, []string{"message is empty"}},
		{`{"to": "counter"}`, []string{"message is required"}},
		{`{"message": "hi"}`, []string{"to is required"}},
		{`{"to": "*", "message": "hi"}`, []string{"broadcast"}},
		{`{"to": "counter", "message": "hi", "extra": 1}`, []string{`unknown field "extra"`}},
	}
	for _, tt := range tests {
		res := send(t, sm, tt.input)
		for _, w := range tt.want {
			if !res.IsError || !strings.Contains(res.Content, w) {
				t.Errorf("SendMessage(%s) = %+v; want an error containing %q", tt.input, res, w)
			}
		}
	}
	if sm.ReadOnly(nil) || sm.Spec().Name != "SendMessage" || !json.Valid(sm.Spec().InputSchema) || !strings.Contains(sm.Spec().Description, "resumed") {
		t.Errorf("spec = %+v", sm.Spec())
	}
}

func TestSendMessageKeepsTheLatest(t *testing.T) {
	reg := registry(t)
	sub := reg.Subscribe()
	defer sub.Close()
	tl, sm, _ := setupRec(t, reg, `{"turns": [{"reply": {"text": "done"}, "repeat": true}]}`, 2)
	var ids []taskreg.ID
	for range 3 {
		id := startBG(t, tl, `{"description": "quick", "prompt": "go", "run_in_background": true}`)
		nextNote(t, sub, id)
		ids = append(ids, id)
	}
	res := send(t, sm, `{"to": "`+string(ids[0])+`", "message": "again"}`)
	if !res.IsError || strings.Contains(res.Content, string(ids[0])+" (") || !strings.Contains(res.Content, string(ids[1])) || !strings.Contains(res.Content, string(ids[2])) {
		t.Errorf("SendMessage to the dropped agent = %+v; want an error listing only the two kept", res)
	}
	if res := send(t, sm, `{"to": "`+string(ids[1])+`", "message": "again"}`); res.IsError {
		t.Errorf("SendMessage to a kept agent = %+v", res)
	}
	nextNote(t, sub, ids[1])
}
