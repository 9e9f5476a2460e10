package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// echo answers each prompt with "done: " and the prompt, counting runs.
type echo struct {
	runs atomic.Int32
	// answer, when set, replaces the default answer.
	answer func(req Request) (string, error)
}

func (e *echo) RunAgent(ctx context.Context, req Request) (Reply, error) {
	e.runs.Add(1)
	if err := ctx.Err(); err != nil {
		return Reply{}, context.Cause(ctx)
	}
	if e.answer != nil {
		s, err := e.answer(req)
		return Reply{Text: s, Usage: Usage{InputTokens: 10, OutputTokens: 5}}, err
	}
	return Reply{Text: "done: " + req.Prompt, Usage: Usage{InputTokens: 10, OutputTokens: 5}}, nil
}

func mustParse(t *testing.T, src string) *Script {
	t.Helper()
	s, err := Parse("test.js", src)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

func runScript(t *testing.T, src string, rn Runner, opts Options) (Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a hang fails, it is not a speed check
	defer cancel()
	return Run(ctx, mustParse(t, src), nil, rn, opts)
}

const head = "export const meta = { name: 't', description: 'd', phases: [{ title: 'Review' }, { title: 'Verify' }] }\n"

func TestParseMeta(t *testing.T) {
	s := mustParse(t, `// a comment
export const meta = {
  name: "review",
  description: 'Review then verify',
  phases: [{ title: "Review", detail: "read" }, { title: `+"`Verify`"+` }],
  budget: -1.5, nested: { ok: [true, null] },
}
return 1`)
	if s.Meta.Name != "review" || s.Meta.Description != "Review then verify" {
		t.Errorf("Meta = %+v", s.Meta)
	}
	if got := s.Meta.PhaseTitles(); strings.Join(got, ",") != "Review,Verify" || s.Meta.Phases[0].Detail != "read" {
		t.Errorf("phases = %+v", s.Meta.Phases)
	}
	if s.Meta.Raw["budget"] != -1.5 {
		t.Errorf("budget = %v", s.Meta.Raw["budget"])
	}
}

func TestParseMetaRefused(t *testing.T) {
	tests := []struct {
		name, src string
		line      int
		want      string
	}{
		{"call", "export const meta = {\n  name: 'x',\n  description: String(1),\n}\n", 3, "a call"},
		{"variable", "const n = 'x'\nexport const meta = {\n  name: n,\n}\n", 3, "n is a variable"},
		{"template", "export const meta = {\n  name: `a${1}`,\n}\n", 2, "template"},
		{"computed key", "export const meta = {\n\n  ['na'+'me']: 'x',\n}\n", 3, "computed key"},
		{"shorthand", "const name = 1\nexport const meta = { name }\n", 2, "shorthand"},
		{"bad phases", "export const meta = { phases: [{ detail: 'x' }] }\n", 1, "title"},
		{"syntax", "export const meta = {}\nlet = = 2\n", 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("w.js", tt.src)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse = %v; want a SyntaxError", err)
			}
			if se.Line != tt.line || !strings.Contains(se.Msg, tt.want) {
				t.Errorf("Parse = %v (line %d); want line %d mentioning %q", se, se.Line, tt.line, tt.want)
			}
		})
	}
	if _, err := Parse("w.js", "return 1"); !errors.Is(err, ErrNoMeta) {
		t.Errorf("Parse(no meta) = %v; want ErrNoMeta", err)
	}
}

func TestParallelOrderAndErrors(t *testing.T) {
	// Slot 0 finishes last; results still come in slot order, and a
	// failed slot is undefined with its error kept.
	release := make(chan struct{})
	rn := &echo{answer: func(req Request) (string, error) {
		switch req.Label {
		case "slow":
			<-release
		case "bad":
			return "", errors.New("boom")
		case "fast":
			close(release)
		}
		return req.Label, nil
	}}
	res, err := runScript(t, head+`
const r = await parallel([
  () => agent("a", { label: "slow" }),
  () => agent("b", { label: "bad" }),
  async () => { const x = await agent("c", { label: "fast" }); return x + "!" },
]);
return { r, err: r.errors[1].message }`, rn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Value), `{"r":["slow",null,"fast!"],"err":"boom"}`; got != want {
		t.Errorf("value = %s; want %s", got, want)
	}
	if res.Agents != 3 || res.Failed != 1 {
		t.Errorf("Agents, Failed = %d, %d; want 3, 1", res.Agents, res.Failed)
	}
}

func TestPipelineOverlap(t *testing.T) {
	// Item 1's first stage may finish only once item 0's second stage
	// runs: a pipeline that waited for every first stage before any
	// second would never get there.
	item0stage2 := make(chan struct{})
	rn := &echo{answer: func(req Request) (string, error) {
		switch req.Label {
		case "s1-1":
			select {
			case <-item0stage2:
			case <-time.After(20 * time.Second):
				return "", errors.New("item 0's second stage never ran while item 1's first stage did")
			}
		case "s2-0":
			close(item0stage2)
		}
		return req.Label, nil
	}}
	res, err := runScript(t, head+`
return await pipeline([0, 1, 2],
  (item, _, i) => agent("first " + item, { label: "s1-" + i, phase: "Review" }),
  (prev, item, i) => agent("second " + prev, { label: "s2-" + i, phase: "Verify" }),
  (prev) => prev.toUpperCase())`, rn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Value), `["S2-0","S2-1","S2-2"]`; got != want {
		t.Errorf("value = %s; want %s", got, want)
	}
}

func TestConcurrencyBound(t *testing.T) {
	var cur, peak atomic.Int32
	gate := make(chan struct{})
	var once sync.Once
	rn := &echo{answer: func(req Request) (string, error) {
		n := cur.Add(1)
		defer cur.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		if n == 2 {
			once.Do(func() { close(gate) })
		}
		<-gate
		return "x", nil
	}}
	_, err := runScript(t, head+`return await parallel([1,2,3,4,5,6].map(i => () => agent("p" + i)))`, rn, Options{Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if p := peak.Load(); p != 2 {
		t.Errorf("peak concurrency = %d; want 2", p)
	}
}

func TestFailFast(t *testing.T) {
	stopped, started := make(chan string, 4), make(chan struct{}, 4)
	// The long agents block until their context ends: failFast must end
	// it. The bad one fails once both run.
	long := RunnerFunc(func(ctx context.Context, req Request) (Reply, error) {
		if req.Label == "bad" {
			<-started
			<-started
			return Reply{}, errors.New("broken")
		}
		started <- struct{}{}
		<-ctx.Done()
		stopped <- req.Label
		return Reply{}, context.Cause(ctx)
	})
	_, err := runScript(t, head+`
try {
  await parallel([() => agent("1", {label: "long1"}), () => agent("2", {label: "bad"}), () => agent("3", {label: "long2"})], { failFast: true });
  return "not rejected";
} catch (e) { throw new Error("caught: " + e.message) }`, long, Options{})
	var se *ScriptError
	if !errors.As(err, &se) || se.Message != "caught: broken" {
		t.Fatalf("Run = %v; want the script to rethrow 'caught: broken'", err)
	}
	if len(stopped) != 2 {
		t.Errorf("%d long agents stopped; want 2", len(stopped))
	}
}

func TestSchemaRetryThenReject(t *testing.T) {
	schema := `{ type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] }`
	t.Run("retry passes", func(t *testing.T) {
		var prompts []string
		var mu sync.Mutex
		rn := &echo{answer: func(req Request) (string, error) {
			mu.Lock()
			prompts = append(prompts, req.Prompt)
			mu.Unlock()
			if req.Attempt == 1 {
				return `{"ok": "yes"}`, nil
			}
			return "Here:\n```json\n{\"ok\": true}\n```", nil
		}}
		res, err := runScript(t, head+`const v = await agent("check", { schema: `+schema+` }); return v.ok`, rn, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if string(res.Value) != "true" || rn.runs.Load() != 2 {
			t.Errorf("value %s after %d runs; want true after 2", res.Value, rn.runs.Load())
		}
		if !strings.Contains(prompts[0], `"required":["ok"]`) || !strings.Contains(prompts[1], "did not validate") {
			t.Errorf("prompts = %q", prompts)
		}
	})
	t.Run("second failure rejects", func(t *testing.T) {
		rn := &echo{answer: func(req Request) (string, error) { return `{"ok": 1}`, nil }}
		_, err := runScript(t, head+`return await agent("check", { schema: `+schema+` })`, rn, Options{})
		var se *ScriptError
		if !errors.As(err, &se) || !strings.Contains(se.Message, "schema") {
			t.Fatalf("Run = %v; want a schema rejection", err)
		}
		if rn.runs.Load() != 2 {
			t.Errorf("runs = %d; want 2", rn.runs.Load())
		}
	})
}

func TestEndlessLoopInterrupted(t *testing.T) {
	_, err := runScript(t, head+`await sleep(1); while (true) {}`, &echo{}, Options{MaxBusy: 100 * time.Millisecond})
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "endless loop") {
		t.Fatalf("Run = %v; want ErrBusy", err)
	}
}

func TestStuck(t *testing.T) {
	_, err := runScript(t, head+`await new Promise(() => {})`, &echo{}, Options{})
	if !errors.Is(err, ErrStuck) {
		t.Fatalf("Run = %v; want ErrStuck", err)
	}
}

func TestAgentCap(t *testing.T) {
	rn := &echo{}
	res, err := runScript(t, head+`
const r = await parallel([1,2,3,4,5].map(i => () => agent("a" + i)));
return r.filter(x => x === undefined).length`, rn, Options{MaxAgents: 3})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Value) != "2" || rn.runs.Load() != 3 {
		t.Errorf("value %s, runs %d; want 2 refused and 3 runs", res.Value, rn.runs.Load())
	}
}

func TestBudget(t *testing.T) {
	rn := &echo{}
	n := 0
	_, err := runScript(t, head+`await agent("one"); await agent("two"); return 1`, rn, Options{Budget: func() error {
		n++
		if n > 1 {
			return errors.New("spent $5.00 of $5.00")
		}
		return nil
	}})
	if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "budget: spent") {
		t.Fatalf("Run = %v; want ErrBudget", err)
	}
	if rn.runs.Load() != 1 {
		t.Errorf("runs = %d; want 1", rn.runs.Load())
	}
}

func TestResumeReplaysCache(t *testing.T) {
	src := head + `
phase("Review");
const found = await parallel(["a", "b"].map(f => () => agent("review " + f, { label: f })));
phase("Verify");
const v = await agent("verify " + found.join(","), { label: "verify" });
return v`
	var journal []Entry
	failing := &echo{answer: func(req Request) (string, error) {
		if req.Label == "verify" {
			return "", errors.New("model down")
		}
		return "ok " + req.Label, nil
	}}
	_, err := runScript(t, src, failing, Options{Record: func(e Entry) { journal = append(journal, e) }})
	if err == nil || failing.runs.Load() != 3 {
		t.Fatalf("first run: %v after %d runs; want a failure after 3", err, failing.runs.Load())
	}
	rn := &echo{}
	var events []Event
	res, err := runScript(t, src, rn, Options{Cache: journal, Observer: func(e Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	if rn.runs.Load() != 1 || res.Cached != 2 {
		t.Errorf("resume ran %d agents with %d cached; want 1 and 2", rn.runs.Load(), res.Cached)
	}
	if want := `"done: verify ok a,ok b"`; string(res.Value) != want {
		t.Errorf("value = %s; want %s", res.Value, want)
	}
	// A changed prompt reruns from there.
	rn2 := &echo{}
	changed := strings.Replace(src, `"review " + f`, `"look at " + f`, 1)
	if _, err := runScript(t, changed, rn2, Options{Cache: journal}); err != nil {
		t.Fatal(err)
	}
	if rn2.runs.Load() != 3 {
		t.Errorf("changed script ran %d agents; want 3", rn2.runs.Load())
	}
}

func TestScriptErrorStack(t *testing.T) {
	_, err := runScript(t, head+"\n\nfunction f() { throw new Error('bad thing') }\nf()", &echo{}, Options{})
	var se *ScriptError
	if !errors.As(err, &se) || se.Message != "bad thing" {
		t.Fatalf("Run = %v; want ScriptError bad thing", err)
	}
	if !strings.Contains(se.Stack, "test.js:4:") || !strings.Contains(se.Stack, "test.js:5:") {
		t.Errorf("stack = %q; want lines 4 and 5 of test.js", se.Stack)
	}
}

func TestUnknownPhase(t *testing.T) {
	_, err := runScript(t, head+`await agent("x", { phase: "Deploy" })`, &echo{}, Options{})
	if err == nil || !strings.Contains(err.Error(), `phase "Deploy" is not one of meta.phases (Review, Verify)`) {
		t.Fatalf("Run = %v", err)
	}
}

func TestNoAmbientAuthority(t *testing.T) {
	res, err := runScript(t, head+`return [typeof require, typeof setTimeout, typeof fetch, typeof process, typeof eval, typeof args, typeof console]`, &echo{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `["undefined","undefined","undefined","undefined","undefined","undefined","undefined"]`; string(res.Value) != want {
		t.Errorf("value = %s; want %s", res.Value, want)
	}
}

func TestArgsAndLog(t *testing.T) {
	var logs []string
	res, err := Run(t.Context(), mustParse(t, head+`log("files", args.files, 3); return args.files.length`),
		json.RawMessage(`{"files":["a","b"]}`), &echo{}, Options{Observer: func(e Event) {
			if e.Kind == EventLog {
				logs = append(logs, e.Text)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Value) != "2" || fmt.Sprint(logs) != `[files ["a","b"] 3]` {
		t.Errorf("value %s, logs %q", res.Value, logs)
	}
}

func TestResumePipelineOrder(t *testing.T) {
	// Item 1's review finishes before item 0's, so the first run calls
	// "verify 1" before "verify 0"; the resume must replay in that order
	// and run nothing.
	src := head + `return await pipeline([0, 1],
  (i) => agent("review " + i, { label: "r" + i }),
  (prev, i) => agent("verify " + i, { label: "v" + i }))`
	r1done := make(chan struct{})
	first := &echo{answer: func(req Request) (string, error) {
		switch req.Label {
		case "r0":
			<-r1done
		case "r1":
			defer close(r1done)
		}
		return req.Label, nil
	}}
	var journal []Entry
	if _, err := runScript(t, src, first, Options{Record: func(e Entry) { journal = append(journal, e) }}); err != nil {
		t.Fatal(err)
	}
	for i := range journal {
		journal[i].Seq = i // as ReadJournal numbers them
	}
	rn := &echo{}
	res, err := runScript(t, src, rn, Options{Cache: journal})
	if err != nil {
		t.Fatal(err)
	}
	if rn.runs.Load() != 0 || res.Cached != 4 || string(res.Value) != `["v0","v1"]` {
		t.Errorf("resume ran %d agents, %d cached, value %s; want 0, 4", rn.runs.Load(), res.Cached, res.Value)
	}
}
