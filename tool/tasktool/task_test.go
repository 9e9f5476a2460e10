package tasktool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	taskreg "github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/bash"
	"github.com/troupe-dev/troupe/tool/tasktool"
)

// registry returns a task registry for tests, closed at cleanup.
func registry(t *testing.T) *taskreg.Registry {
	t.Helper()
	r := taskreg.New(taskreg.Config{Dir: t.TempDir(), PollInterval: -1})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Close(ctx); err != nil {
			t.Errorf("Close = %v", err)
		}
	})
	return r
}

func run(t *testing.T, tl tool.Tool, input string) tool.Result {
	t.Helper()
	res, err := tl.Run(t.Context(), tool.Call{ID: "toolu_1", Name: tl.Spec().Name, Input: json.RawMessage(input)})
	if err != nil {
		t.Fatalf("%s(%s) error = %v; want a Result", tl.Spec().Name, input, err)
	}
	return res
}

// waitFor polls cond (real processes: real time) for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var idRE = regexp.MustCompile(`ID: (b[0-9a-z]{8})\.`)

// startBash runs a background Bash call and returns the task id.
func startBash(t *testing.T, reg *taskreg.Registry, dir, command string) taskreg.ID {
	t.Helper()
	bt := bash.New(bash.Config{Dir: dir, Background: tasktool.BashBackground(reg, tasktool.BashOptions{Dir: dir})})
	if !strings.Contains(bt.Spec().Description, "TaskOutput") {
		t.Errorf("Bash description does not mention TaskOutput when Background is set")
	}
	in, _ := json.Marshal(map[string]any{"command": command, "description": "test cmd", "run_in_background": true})
	res := run(t, bt, string(in))
	m := idRE.FindStringSubmatch(res.Content)
	if res.IsError || m == nil {
		t.Fatalf("Bash background = %+v; want a started task", res)
	}
	id := taskreg.ID(m[1])
	s, ok := reg.Get(id)
	if !ok || !strings.Contains(res.Content, s.OutputFile) || s.ToolUseID != "toolu_1" {
		t.Fatalf("task %s = %+v; result %q should name its output file", id, s, res.Content)
	}
	return id
}

func TestBashBackgroundOutputAndNotification(t *testing.T) {
	reg := registry(t)
	sub := reg.Subscribe()
	defer sub.Close()
	dir := t.TempDir()
	id := startBash(t, reg, dir, `echo one; while [ ! -e go ]; do sleep 0.02; done; echo two`)
	out := tasktool.NewOutput(tasktool.Config{Registry: reg})

	// Incremental, without blocking: "one" shows up once.
	var first tool.Result
	waitFor(t, "the first line", func() bool {
		first = run(t, out, `{"task_id": "`+string(id)+`", "block": false}`)
		return strings.Contains(first.Content, "one")
	})
	if !strings.Contains(first.Content, "<status>running</status>") || first.IsError {
		t.Errorf("first TaskOutput = %+v; want running with output one", first)
	}
	again := run(t, out, `{"task_id": "`+string(id)+`", "block": false}`)
	if strings.Contains(again.Content, "one") || !strings.Contains(again.Content, "(no new output)") {
		t.Errorf("second TaskOutput = %q; want no new output", again.Content)
	}

	// Blocking: released by the task's end, with only the new output.
	done := make(chan tool.Result)
	go func() {
		res, _ := out.Run(context.Background(), tool.Call{Input: json.RawMessage(`{"task_id": "` + string(id) + `", "block": true, "timeout": 20000}`)})
		done <- res
	}()
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var last tool.Result
	select {
	case last = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("blocking TaskOutput did not return")
	}
	if !strings.Contains(last.Content, "two") || strings.Contains(last.Content, "one") ||
		!strings.Contains(last.Content, "<status>completed</status>") || !strings.Contains(last.Content, "<exit_code>0</exit_code>") {
		t.Errorf("blocking TaskOutput = %q; want only two, completed, exit code 0", last.Content)
	}

	// Exactly one notification, naming the task.
	var notes []string
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for len(notes) == 0 {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for the notification: %v", err)
		}
		if e.Kind == taskreg.EventTerminated && e.State.ID == id {
			notes = append(notes, e.Notification)
		}
	}
	if reg.Notify(id) {
		t.Error("Notify after the end sent a second notification")
	}
	for {
		e, ok := sub.TryNext()
		if !ok {
			break
		}
		if e.Kind == taskreg.EventTerminated && e.State.ID == id {
			notes = append(notes, e.Notification)
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "<task-id>"+string(id)+"</task-id>") || !strings.Contains(notes[0], "<status>completed</status>") {
		t.Errorf("notifications = %q; want one, completed, for %s", notes, id)
	}
}

func TestTaskOutputTimeoutAndStop(t *testing.T) {
	reg := registry(t)
	id := startBash(t, reg, t.TempDir(), "sleep 300")
	out := tasktool.NewOutput(tasktool.Config{Registry: reg})
	start := time.Now()
	res := run(t, out, `{"task_id": "`+string(id)+`", "block": true, "timeout": 100}`)
	if !strings.Contains(res.Content, "timeout") || !strings.Contains(res.Content, "<status>running</status>") {
		t.Errorf("TaskOutput with timeout = %q; want a timeout, still running", res.Content)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("TaskOutput with a 100 ms timeout took %v", d)
	}

	s, _ := reg.Get(id)
	pgid := s.Detail.(*taskreg.Shell).PID
	stop := tasktool.NewStop(reg, nil)
	res = run(t, stop, `{"shell_id": "`+string(id)+`"}`)
	var got struct {
		Message  string `json:"message"`
		TaskID   string `json:"task_id"`
		TaskType string `json:"task_type"`
		Command  string `json:"command"`
	}
	if err := json.Unmarshal([]byte(res.Content), &got); err != nil || res.IsError {
		t.Fatalf("TaskStop = %+v (%v); want a JSON success", res, err)
	}
	if got.TaskID != string(id) || got.TaskType != "local_bash" || got.Command != "sleep 300" {
		t.Errorf("TaskStop = %+v; want task %s, local_bash, sleep 300", got, id)
	}
	if s, _ := reg.Get(id); s.Status != taskreg.Killed {
		t.Errorf("status after TaskStop = %s; want killed", s.Status)
	}
	waitFor(t, "the shell to be reaped", func() bool {
		s, _ := reg.Get(id)
		return s.Detail.(*taskreg.Shell).Exited
	})
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d still exists after TaskStop (kill 0: %v)", pgid, err)
	}

	res = run(t, stop, `{"task_id": "`+string(id)+`"}`)
	if !res.IsError || !strings.Contains(res.Content, "not running") {
		t.Errorf("second TaskStop = %+v; want a not-running error", res)
	}
	res = run(t, out, `{"task_id": "`+string(id)+`", "block": true}`)
	if res.IsError || !strings.Contains(res.Content, "<status>killed</status>") {
		t.Errorf("TaskOutput of a stopped task = %+v; want killed at once", res)
	}
}

func TestInvalidInputs(t *testing.T) {
	reg := registry(t)
	out := tasktool.NewOutput(tasktool.Config{Registry: reg})
	stop := tasktool.NewStop(reg, nil)
	tests := []struct {
		tl    tool.Tool
		input string
		want  string
	}{
		{out, `{}`, "task_id is required"},
		{out, `{"task_id": "bnosuch00"}`, `task_id "bnosuch00": no such task`},
		{out, `{"task_id": 5}`, `field "task_id" must be string`},
		{out, `{"task_id": "b1", "timeout": -1}`, "timeout must be"},
		{out, `{"task_id": "b1", "block": "yes"}`, `field "block" must be bool`},
		{out, `{"task_id": "b1", "wait": true}`, `unknown field "wait"`},
		{out, `{"task_id": "b1", "tail": 5, "offset": 0}`, "give tail or offset, not both"},
		{out, `{"task_id": "b1", "tail": 0}`, "tail must be a positive number of lines, got 0"},
		{out, `{"task_id": "b1", "offset": -3}`, "offset must be a byte offset of 0 or more, got -3"},
		{out, `{"task_id": "b1", "tail": "end"}`, `field "tail"`},
		{stop, `{}`, "task_id is required"},
		{stop, `{"task_id": "bnosuch00"}`, `task_id "bnosuch00": no such task`},
		{stop, `{"task_id": "b1", "shell_id": "b2"}`, "differ"},
		{stop, `{"task_id": 1}`, `field "task_id" must be string`},
	}
	for _, tt := range tests {
		res := run(t, tt.tl, tt.input)
		if !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("%s(%s) = %+v; want an error containing %q", tt.tl.Spec().Name, tt.input, res, tt.want)
		}
	}
	for _, tl := range []tool.Tool{out, stop} {
		if !json.Valid(tl.Spec().InputSchema) {
			t.Errorf("%s schema is not JSON: %s", tl.Spec().Name, tl.Spec().InputSchema)
		}
	}
	if !out.ReadOnly(nil) || stop.ReadOnly(nil) {
		t.Error("ReadOnly: want TaskOutput read-only and TaskStop not")
	}
}

func TestBashBackgroundStartFailure(t *testing.T) {
	reg := taskreg.New(taskreg.Config{PollInterval: -1}) // no output dir
	defer reg.Close(context.Background())
	bt := bash.New(bash.Config{Background: tasktool.BashBackground(reg, tasktool.BashOptions{})})
	res := run(t, bt, `{"command": "true", "run_in_background": true}`)
	if !res.IsError || !strings.Contains(res.Content, "could not start") {
		t.Errorf("Bash background without an output dir = %+v; want a start error", res)
	}
}

func TestAgentTasks(t *testing.T) {
	reg := registry(t)
	release := make(chan struct{})
	detail := &taskreg.Agent{AgentID: "x", Usage: taskreg.Usage{TotalTokens: 42, ToolUses: 3}}
	done, err := reg.Go(taskreg.State{Type: taskreg.LocalAgent, Description: "quick", Detail: detail},
		func(ctx context.Context, id taskreg.ID) taskreg.Outcome {
			<-release
			return taskreg.Outcome{Status: taskreg.Completed, Record: func(s taskreg.State) taskreg.State {
				s.Detail = s.Detail.(*taskreg.Agent).With(func(c *taskreg.Agent) { c.Result = "THE-RESULT" })
				return s
			}}
		})
	if err != nil {
		t.Fatal(err)
	}
	slow, err := reg.Go(taskreg.State{Type: taskreg.LocalAgent, Description: "slow", Detail: &taskreg.Agent{}},
		func(ctx context.Context, id taskreg.ID) taskreg.Outcome {
			<-ctx.Done()
			return taskreg.Outcome{Status: taskreg.Failed}
		})
	if err != nil {
		t.Fatal(err)
	}
	names := func(name string) (taskreg.ID, bool) { return slow.ID, name == "sleepy" }
	out := tasktool.NewOutput(tasktool.Config{Registry: reg, Resolve: names})
	res := run(t, out, `{"task_id": "`+string(done.ID)+`", "block": false}`)
	if !strings.Contains(res.Content, "<status>running</status>") || !strings.Contains(res.Content, "total_tokens: 42, tool_uses: 3") || strings.Contains(res.Content, "THE-RESULT") {
		t.Errorf("TaskOutput of a running agent = %q; want running with its usage", res.Content)
	}
	close(release)
	res = run(t, out, `{"task_id": "`+string(done.ID)+`"}`) // block defaults to true
	if !strings.Contains(res.Content, "<status>completed</status>") || !strings.Contains(res.Content, "THE-RESULT") {
		t.Errorf("blocking TaskOutput of an agent = %q; want completed with its result", res.Content)
	}
	if res := run(t, out, `{"task_id": "sleepy", "block": false}`); !strings.Contains(res.Content, string(slow.ID)) {
		t.Errorf("TaskOutput by name = %q; want task %s", res.Content, slow.ID)
	}
	res = run(t, tasktool.NewStop(reg, names), `{"task_id": "sleepy"}`)
	if res.IsError || !strings.Contains(res.Content, `"task_type":"local_agent"`) || !strings.Contains(res.Content, string(slow.ID)) {
		t.Errorf("TaskStop by name = %+v; want the agent stopped", res)
	}
	if s, _ := reg.Get(slow.ID); s.Status != taskreg.Killed {
		t.Errorf("stopped agent status = %s; want killed", s.Status)
	}
}

// waitEnded waits for task id's end.
func waitEnded(t *testing.T, reg *taskreg.Registry, id taskreg.ID) taskreg.State {
	t.Helper()
	var s taskreg.State
	waitFor(t, "the task's end", func() bool {
		s, _ = reg.Get(id)
		return s.Status.Terminal() && s.Notified
	})
	return s
}

// TestTaskOutputTailOfLargeOutput: the end of a 19 MB output is one call
// away with tail; offset reads any part; a plain call says how much is
// left and how to get the end.
func TestTaskOutputTailOfLargeOutput(t *testing.T) {
	reg := registry(t)
	dir := t.TempDir()
	id := startBash(t, reg, dir, `seq 1 2500000`)
	s := waitEnded(t, reg, id)
	fi, err := os.Stat(s.OutputFile)
	if err != nil || fi.Size() < 18<<20 {
		t.Fatalf("output %v, %v; want about 19 MB", fi, err)
	}
	size := fi.Size()
	out := tasktool.NewOutput(tasktool.Config{Registry: reg})

	tail := run(t, out, `{"task_id": "`+string(id)+`", "tail": 3}`)
	if tail.IsError || !strings.Contains(tail.Content, "<output>\n2499998\n2499999\n2500000\n</output>") {
		t.Errorf("tail 3 = %q; want the last 3 lines in one call", tail.Content)
	}
	if want := fmt.Sprintf("[shown: bytes %d-%d of %d; use offset to read an earlier part]", size-24, size, size); !strings.Contains(tail.Content, want) {
		t.Errorf("tail 3 = %q; want %q", tail.Content, want)
	}
	after := run(t, out, `{"task_id": "`+string(id)+`", "block": false}`)
	if !strings.Contains(after.Content, "(no new output)") {
		t.Errorf("plain call after the tail = %q; want nothing new (the tail read to the end)", after.Content)
	}

	first := run(t, out, `{"task_id": "`+string(id)+`", "offset": 0}`)
	if !strings.HasPrefix(strings.SplitN(first.Content, "<output>\n", 2)[1], "1\n2\n3\n") ||
		!strings.Contains(first.Content, fmt.Sprintf("[shown: bytes 0-%d of %d; more output follows", tasktool.DefaultMaxRead, size)) {
		t.Errorf("offset 0 = %.200q...; want the start and how much follows", first.Content)
	}
	next := run(t, out, `{"task_id": "`+string(id)+`", "block": false}`)
	if !strings.Contains(next.Content, fmt.Sprintf("[shown: bytes %d-%d of %d", tasktool.DefaultMaxRead, 2*tasktool.DefaultMaxRead, size)) {
		t.Errorf("plain call after offset 0 = %.100q ... %q; want the next 64 KiB", next.Content, next.Content[max(0, len(next.Content)-200):])
	}
	end := run(t, out, fmt.Sprintf(`{"task_id": "%s", "offset": %d}`, id, size-8))
	if !strings.Contains(end.Content, "<output>\n2500000\n</output>") {
		t.Errorf("offset size-8 = %q; want the last line", end.Content)
	}
	past := run(t, out, fmt.Sprintf(`{"task_id": "%s", "offset": %d}`, id, size+5))
	if !strings.Contains(past.Content, fmt.Sprintf("nothing at offset %d: the output has %d bytes", size+5, size)) {
		t.Errorf("offset past the end = %q", past.Content)
	}
}

// manualClock is a task.Clock that moves only when told; its tickers
// never fire (the tests poll by hand).
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *manualClock) NewTicker(time.Duration) taskreg.Ticker { return stoppedTicker{} }

type stoppedTicker struct{}

func (stoppedTicker) C() <-chan time.Time { return nil }
func (stoppedTicker) Stop()               {}

// TestTaskOutputOfEvictedTask: once a finished task was evicted (its
// notification went out and the grace period passed), TaskOutput says it
// ended and its output was removed, not that it never existed.
func TestTaskOutputOfEvictedTask(t *testing.T) {
	clock := &manualClock{now: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}
	reg := taskreg.New(taskreg.Config{Dir: t.TempDir(), PollInterval: -1, Clock: clock})
	t.Cleanup(func() { reg.Close(context.Background()) })
	id := startBash(t, reg, t.TempDir(), `echo hi`)
	s := waitEnded(t, reg, id)
	clock.Advance(taskreg.DefaultGrace)
	if rep, err := reg.Poll(t.Context()); err != nil || len(rep.Evicted) != 1 {
		t.Fatalf("Poll = %+v, %v; want the task evicted", rep, err)
	}
	if _, err := os.Stat(s.OutputFile); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("output file: %v; want it removed", err)
	}
	res := run(t, tasktool.NewOutput(tasktool.Config{Registry: reg}), `{"task_id": "`+string(id)+`"}`)
	want := fmt.Sprintf(`TaskOutput: task %s (completed, "test cmd") ended 2026-03-04T05:06:07Z and was removed about 30s after its notification, with its output file`, id)
	if !res.IsError || !strings.Contains(res.Content, want) {
		t.Errorf("TaskOutput = %+v; want an error containing %q", res, want)
	}
}
