package streamjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/endpoint"
	"github.com/troupe-dev/troupe/task"
)

// lines decodes stream-json output, failing on a line that is not one
// JSON object.
func lines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var got []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q is not a JSON object: %v", l, err)
		}
		got = append(got, m)
	}
	return got
}

// A whole stream-json run: every line is one object, in order, with the
// session on each; many writers at once never interleave a line.
func TestStreamJSON(t *testing.T) {
	var out bytes.Buffer
	w := New(&out, "stream-json", "s-1", llm.Info{Provider: "scripted", Model: "m"})
	w.Meter = budget.NewMeter(budget.Config{Prices: budget.Table{"m": {Input: 1, Output: 2}}})
	if err := w.Meter.Add("team-lead", "m", llm.Usage{InputTokens: 1000, OutputTokens: 10}); err != nil {
		t.Fatal(err)
	}
	w.Init("/work", nil)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			w.Event(agent.Event{Type: agent.EventAssistant, Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: fmt.Sprint("part ", i)}}}})
		})
	}
	wg.Wait()
	w.Task(task.SystemEvent{Type: "system", Subtype: "task_started", TaskID: "b1", TaskType: task.LocalBash})
	if !w.TeamEvent("ann", "idle", "ann is idle") {
		t.Error("TeamEvent in stream-json reported nothing written")
	}
	if err := w.Finish(agent.Result{Text: "done", Calls: 2}, nil); err != nil {
		t.Fatalf("Finish = %v", err)
	}
	got := lines(t, out.String())
	if len(got) != 1+20+1+1+1 {
		t.Fatalf("%d lines; want 24:\n%s", len(got), out.String())
	}
	kinds := func(m map[string]any) string { return fmt.Sprint(m["type"], "/", m["subtype"]) }
	if k := kinds(got[0]); k != "system/init" || got[0]["cwd"] != "/work" || got[0]["tools"] == nil {
		t.Errorf("first line %v; want the init with cwd and an empty tool list", got[0])
	}
	for _, m := range got[1:21] {
		if m["type"] != "assistant" || m["session_id"] != "s-1" {
			t.Errorf("line %v; want an assistant message of s-1", m)
		}
	}
	if k := kinds(got[21]); k != "system/task_started" {
		t.Errorf("line 22 is %s; want the task's event", k)
	}
	if k := kinds(got[22]); k != "system/team_event" || got[22]["agent"] != "ann" {
		t.Errorf("line 23 is %v; want ann's team event", got[22])
	}
	res := got[23]
	want := map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": "done", "num_turns": 2.0}
	for k, v := range want {
		if !cmp.Equal(res[k], v) {
			t.Errorf("result %s = %v; want %v", k, res[k], v)
		}
	}
	if res["total_cost_usd"] != 0.00102 {
		t.Errorf("total_cost_usd = %v; want the meter's 0.00102", res["total_cost_usd"])
	}
	if byAgent, _ := res["usage_by_agent"].(map[string]any); byAgent["team-lead"] == nil {
		t.Errorf("usage_by_agent = %v; want the lead's line", res["usage_by_agent"])
	}
}

// The result's subtype and the command's error say how the run ended.
func TestFinishEndings(t *testing.T) {
	exceeded := &budget.ExceededError{Limit: "--max-tokens", Spent: "120", Bound: "100"}
	for _, c := range []struct {
		name    string
		res     agent.Result
		err     error
		subtype string
		wantErr string
	}{
		{"error", agent.Result{}, errors.New("boom"), "error_during_execution", "boom"},
		{"max turns", agent.Result{StopReason: agent.StopMaxTurns, Calls: 3}, nil, "error_max_turns", "--max-turns limit (3 model calls)"},
		{"interrupted", agent.Result{Interrupted: true}, nil, "interrupted", "interrupted"},
		{"budget", agent.Result{}, fmt.Errorf("run: %w", exceeded), "error_max_tokens", "max-tokens"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			err := New(&out, "json", "s", llm.Info{}).Finish(c.res, c.err)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Finish error = %v; want %q", err, c.wantErr)
			}
			var r map[string]any
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatalf("json output %q: %v", out.String(), err)
			}
			if r["subtype"] != c.subtype || r["is_error"] != true {
				t.Errorf("result %v; want subtype %s, is_error", r, c.subtype)
			}
		})
	}
}

// The text format prints the result's text only; progress lines go to
// Progress, never to the output.
func TestText(t *testing.T) {
	var out, progress bytes.Buffer
	w := New(&out, "text", "s", llm.Info{Provider: "anthropic"})
	w.Progress, w.Endpoint = &progress, endpoint.Server{Provider: "anthropic", URL: "http://x"}
	w.Init("/w", []string{"Bash"})
	w.Event(agent.Event{Type: agent.EventRetry, Err: &llm.RetryError{Err: &llm.APIError{Status: 529}, Attempt: 1, Max: 3}})
	if w.TeamEvent("ann", "idle", "x") {
		t.Error("TeamEvent wrote in the text format")
	}
	if err := w.Finish(agent.Result{Text: "the answer"}, nil); err != nil {
		t.Fatal(err)
	}
	if out.String() != "the answer\n" {
		t.Errorf("text output %q; want the answer alone", out.String())
	}
	if !strings.Contains(progress.String(), "is failing or overloaded; retry 1 of 2") {
		t.Errorf("progress %q; want the retry line", progress.String())
	}
}
