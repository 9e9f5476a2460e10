package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/cli/agentflags"
	"github.com/troupe-dev/troupe/cli/usagecmd"
	"github.com/troupe-dev/troupe/llm/llmtest"
)

// writeIn writes a file, making its folder.
func writeIn(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, content)
}

// runIn runs troupe in-process with home as its store root.
func runIn(t *testing.T, home string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }, NewID: func() string { return "session-1" }}
	err = m.Run(t.Context(), append([]string{"--home", home}, args...))
	return out.String(), errOut.String(), err
}

// --max-tokens stops a headless run at its next model call: exit status 6,
// a budget_exceeded event, the result's subtype and totals, and the
// session's ledger that troupe usage reads.
func TestMaxTokensStopsTheRun(t *testing.T) {
	dir := t.TempDir()
	home, cwd := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	writeIn(t, filepath.Join(cwd, "notes.txt"), "alpha\n")
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"model":"claude-sonnet-4-5","turns":[
 {"match":{"turn":0},"reply":{"tool_calls":[{"name":"Read","input":{"file_path":"notes.txt"}}],"usage":{"input_tokens":100,"output_tokens":20}}},
 {"reply":{"text":"NEVER"},"repeat":true}]}`)
	out, errOut, err := runIn(t, home, "-p", "--trust", "--cwd", cwd, "--provider", "scripted", "--script", script,
		"--output-format", "stream-json", "--max-tokens", "100", "read the notes")
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != agentflags.ExitBudget {
		t.Fatalf("run past --max-tokens: %v; want exit status %d\n%s\n%s", err, agentflags.ExitBudget, out, errOut)
	}
	if !strings.Contains(errOut, "budget exceeded: 120 tokens spent, --max-tokens allows 100 tokens") {
		t.Errorf("stderr does not say why:\n%s", errOut)
	}
	lines := streamLines(t, out)
	var sawEvent bool
	for _, l := range lines {
		sawEvent = sawEvent || l["subtype"] == "budget_exceeded"
	}
	if strings.Contains(out, "NEVER") {
		t.Error("the model was called past the limit")
	}
	if !sawEvent {
		t.Errorf("no budget_exceeded event:\n%s", out)
	}
	res := lines[len(lines)-1]
	if res["type"] != "result" || res["subtype"] != "error_max_tokens" || res["is_error"] != true {
		t.Errorf("result = %v; want subtype error_max_tokens", res)
	}
	lead, _ := res["usage_by_agent"].(map[string]any)["lead"].(map[string]any)
	if lead["calls"] != 1.0 || lead["input_tokens"] != 100.0 {
		t.Errorf("usage_by_agent.lead = %v; want 1 call of 100 input tokens", lead)
	}
	// 100 in, 20 out at $3 and $15 per million.
	if c, ok := res["total_cost_usd"].(float64); !ok || math.Abs(c-0.0006) > 1e-12 {
		t.Errorf("total_cost_usd = %v; want 0.0006", res["total_cost_usd"])
	}

	out, _, err = runIn(t, home, "usage", "--session", "session-1", "--json")
	if err != nil {
		t.Fatalf("troupe usage: %v", err)
	}
	var u usagecmd.Report
	if err := json.Unmarshal([]byte(out), &u); err != nil {
		t.Fatalf("troupe usage --json: %v\n%s", err, out)
	}
	if u.Session != "session-1" || u.Calls != 1 || u.ByAgent["lead"].InputTokens != 100 || math.Abs(u.Total.CostUSD-0.0006) > 1e-12 {
		t.Errorf("troupe usage --json = %+v", u)
	}
	out, _, err = runIn(t, home, "usage") // the newest session
	if err != nil || !strings.Contains(out, "Session session-1: 1 model call(s), 120 tokens, $0.0006") || !strings.Contains(out, "claude-sonnet-4-5") {
		t.Errorf("troupe usage = %v\n%s", err, out)
	}
}

// A teammate of a type with maxBudgetUsd stops once it has spent it: the
// lead hears why and finishes; the run succeeds, and the ledger has the
// teammate's spending under its name.
func TestTeammateMaxBudgetUsd(t *testing.T) {
	dir := t.TempDir()
	home, cwd := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	writeIn(t, filepath.Join(cwd, "notes.txt"), "alpha\n")
	writeIn(t, filepath.Join(cwd, ".claude", "agents", "frugal.md"), "---\nname: frugal\ndescription: a cheap helper\nmaxBudgetUsd: 0.001\n---\nYou are frugal.\n")
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"model":"claude-sonnet-4-5","turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"thrift"}},
   {"name":"Agent","input":{"description":"reader","name":"ann","subagent_type":"frugal","prompt":"read notes.txt"}}]}},
 {"match":{"system":"You are frugal","turn":0},"reply":{"tool_calls":[{"name":"Read","input":{"file_path":"notes.txt"}}],
   "usage":{"input_tokens":1000,"output_tokens":100}}},
 {"match":{"system":"You are frugal"},"reply":{"text":"ANN-NEVER"},"repeat":true},
 {"match":{"system":"You are troupe,","user":"budget exceeded"},"reply":{"text":"LEAD-HEARD"}},
 {"match":{"system":"You are troupe,"},"reply":{"text":"waiting"},"repeat":true}
]}`)
	out, errOut, err := runIn(t, home, "-p", "--trust", "--agent-teams", "--explicit-teams", "--teammate-mode", "in-process", "--cwd", cwd,
		"--provider", "scripted", "--script", script, "--output-format", "json", "--keep-team", "go")
	if err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, out, errOut)
	}
	if !strings.Contains(errOut, "budget exceeded: ann $0.0045 spent, maxBudgetUsd allows $0.0010") {
		t.Errorf("the timeline does not say ann stopped at its budget:\n%s", errOut)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("result: %v\n%s", err, out)
	}
	if res["result"] != "LEAD-HEARD" {
		t.Errorf("the lead's last answer = %v; want LEAD-HEARD (it was told why ann stopped)\n%s", res["result"], errOut)
	}
	ann, _ := res["usage_by_agent"].(map[string]any)["ann"].(map[string]any)
	if ann["calls"] != 1.0 {
		t.Errorf("usage_by_agent.ann = %v; want 1 call (its second was refused)", ann)
	}
	b, err := os.ReadFile(filepath.Join(home, "sessions", "session-1", "usage.ndjson"))
	if err != nil || !bytes.Contains(b, []byte(`"agent":"ann","model":"claude-sonnet-4-5"`)) {
		t.Errorf("ledger: %v\n%s", err, b)
	}
	// The dashboard over the kept team shows what ann spent and did.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		m := &Main{Stdout: pw, Stderr: io.Discard, Getenv: func(string) string { return "" }}
		done <- m.Run(ctx, []string{"--home", home, "dashboard", "--addr", "127.0.0.1:0"})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("read the dashboard's address: %v", err)
	}
	go io.Copy(io.Discard, pr)
	base, token := dashboardAddress(t, line)
	page := func(path string) string {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	if body := page("/team/thrift"); !strings.Contains(body, `<td class="spent">1,100 tokens · $0.0045</td>`) {
		t.Errorf("the team page does not show ann's spending:\n%s", body)
	}
	if body := page("/team/thrift/member/ann"); !strings.Contains(body, "user: read notes.txt") || !strings.Contains(body, "Read") {
		t.Errorf("ann's page does not show her transcript:\n%s", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("dashboard: %v", err)
	}
}

// --max-budget-usd against the fake Anthropic server, priced by the
// settings' modelPrices: the call that reaches the cap is the last one
// sent, and the run exits 6 with the cost on its result.
func TestMaxBudgetUSDOnAnthropic(t *testing.T) {
	dir := t.TempDir()
	cwd := filepath.Join(dir, "work")
	writeIn(t, filepath.Join(cwd, "notes.txt"), "alpha\n")
	// $6 and $30 per million: 100k in and 10k out cost $0.90 a call.
	writeIn(t, filepath.Join(cwd, ".troupe", "settings.json"), `{"modelPrices":{"claude-sonnet-4-5":{"input":6,"output":30}}}`)
	srv := llmtest.NewAnthropicServer(t, func(req *llmtest.AnthropicRequest) llmtest.AnthropicReply {
		r := llmtest.AnthropicToolCall("toolu_1", "Read", `{"file_path":"notes.txt"}`)
		r.Usage = llmtest.AnthropicUsage{InputTokens: 100_000, OutputTokens: 10_000}
		return r
	})
	var out, errOut bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &errOut, Getenv: func(k string) string {
		return map[string]string{"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": srv.URL}[k]
	}}
	err := m.Run(t.Context(), []string{"--home", filepath.Join(dir, "home"), "-p", "--trust", "--cwd", cwd, "--model", "claude-sonnet-4-5",
		"--output-format", "json", "--max-budget-usd", "1", "read the notes again and again"})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != agentflags.ExitBudget {
		t.Fatalf("run: %v; want exit status %d\n%s\n%s", err, agentflags.ExitBudget, out.String(), errOut.String())
	}
	if n := srv.RequestCount(); n != 2 {
		t.Errorf("the server got %d calls; want 2 ($1.80 after the second, past the $1 cap)", n)
	}
	var res map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("result: %v\n%s", err, out.String())
	}
	if res["subtype"] != "error_max_budget_usd" || math.Abs(res["total_cost_usd"].(float64)-1.8) > 1e-9 {
		t.Errorf("result = %v; want error_max_budget_usd costing $1.80", res)
	}
	if !strings.Contains(errOut.String(), "budget exceeded: $1.8000 spent, --max-budget-usd allows $1.0000; no new model call starts") {
		t.Errorf("stderr:\n%s", errOut.String())
	}
}

// Limits and prices that are not amounts are refused before anything runs.
func TestBudgetBadInput(t *testing.T) {
	dir := t.TempDir()
	cwd := filepath.Join(dir, "work")
	writeIn(t, filepath.Join(cwd, "x"), "")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-budget-usd", "-1"}, "is not an amount in US dollars"},
		{[]string{"--max-tokens", "-5"}, "is not a number of tokens"},
		{[]string{"--max-budget-usd", "lots"}, `"lots" is not an amount`},
		{[]string{"--max-budget-usd", "NaN"}, `"NaN" is not an amount`},
	} {
		_, _, err := runIn(t, filepath.Join(dir, "home"), append(append([]string{"-p", "--trust", "--cwd", cwd, "--provider", "scripted", "--script", "/nonexistent"}, tt.args...), "hi")...)
		var ue *UsageError
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &ue) {
			t.Errorf("%v: %v; want a usage error containing %q", tt.args, err, tt.want)
		}
	}
	writeIn(t, filepath.Join(cwd, ".troupe", "settings.json"), `{"modelPrices":{"m":{"input":-3}}}`)
	script := filepath.Join(dir, "s.json")
	writeFile(t, script, `{"turns":[{"reply":{"text":"x"}}]}`)
	_, _, err := runIn(t, filepath.Join(dir, "home"), "-p", "--trust", "--cwd", cwd, "--provider", "scripted", "--script", script, "hi")
	if err == nil || !strings.Contains(err.Error(), "settings.json: modelPrices: price of m: -3") {
		t.Errorf("a negative price: %v; want an error naming the file and the model", err)
	}
	_, _, err = runIn(t, filepath.Join(dir, "home"), "usage", "--session", "../x")
	if err == nil || !strings.Contains(err.Error(), "not a session id") {
		t.Errorf("usage --session ../x: %v", err)
	}
}

// A pane teammate's spending (another process, through the session's
// ledger) counts toward the lead's --max-tokens: the lead sees it as it is
// written, asks the teammate to shut down, the teammate's runtime
// approves without a model call and its process exits, the lead's next
// call is refused and the real process exits 6.
func TestPaneSpendingCountsTowardTheSessionCap(t *testing.T) {
	needTmux(t)
	sock := tmuxSocket(t)
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"model":"claude-sonnet-4-5","turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"spendy"}},
   {"name":"Agent","input":{"description":"spender","name":"ann","prompt":"think hard"}}],"usage":{"input_tokens":10,"output_tokens":5}}},
 {"match":{"system":"You are teammate"},"reply":{"text":"THOUGHT","usage":{"input_tokens":4000,"output_tokens":1000}},"repeat":true},
 {"match":{"system":"You are troupe,","turn":1},"reply":{"text":"LEAD WAITS","usage":{"input_tokens":10,"output_tokens":5}}},
 {"match":{"system":"You are troupe,"},"reply":{"text":"LEAD-PAST-THE-CAP"},"repeat":true}
]}`)
	c := exec.CommandContext(t.Context(), os.Args[0], "-p", "--trust", "--agent-teams", "--explicit-teams", "--teammate-mode", "tmux", "--home", home,
		"--provider", "scripted", "--script", script, "--cwd", cwd, "--output-format", "json", "--max-tokens", "1000", "go")
	c.Env = troupeEnv(t, sock)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != agentflags.ExitBudget {
		t.Fatalf("the lead: %v; want exit status %d\nstdout:\n%s\nstderr:\n%s", err, agentflags.ExitBudget, stdout.String(), stderr.String())
	}
	if strings.Contains(stdout.String(), "LEAD-PAST-THE-CAP") {
		t.Error("the lead's model was called past the cap")
	}
	var res map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("result: %v\n%s", err, stdout.String())
	}
	ann, _ := res["usage_by_agent"].(map[string]any)["ann"].(map[string]any)
	if res["subtype"] != "error_max_tokens" || ann["output_tokens"] != 1000.0 {
		t.Errorf("result = %v; want error_max_tokens with ann's 1000 output tokens counted", res)
	}
	t.Logf("usage by agent: %v", res["usage_by_agent"])
	if !regexp.MustCompile(`budget exceeded: \d+ tokens spent, --max-tokens allows 1000 tokens`).MatchString(stderr.String()) {
		t.Errorf("stderr does not say why:\n%s", stderr.String())
	}
	for _, want := range []string{"asked ann to shut down: budget exceeded", "ann approved shutdown", "ann has shut down"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
		}
	}
	for _, bad := range []string{"died", "did not answer", "did not exit"} {
		if strings.Contains(stderr.String()+stdout.String(), bad) {
			t.Errorf("output says %q:\nstdout:\n%s\nstderr:\n%s", bad, stdout.String(), stderr.String())
		}
	}
}

// --max-tokens reached by an in-process teammate: the lead asks every
// teammate to shut down, they approve without a model call and leave
// (none killed, none dead), the person and the lead are told why, and the
// run exits 6 with no model call past the cap.
func TestSessionCapAsksTeammatesToShutDown(t *testing.T) {
	dir := t.TempDir()
	home, cwd := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	writeIn(t, filepath.Join(cwd, "notes.txt"), "alpha\n")
	writeIn(t, filepath.Join(cwd, ".claude", "agents", "reader.md"), "---\nname: reader\ndescription: reads\n---\nYou are a reader.\n")
	writeIn(t, filepath.Join(cwd, ".claude", "agents", "rester.md"), "---\nname: rester\ndescription: rests\n---\nYou are a rester.\n")
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"model":"claude-sonnet-4-5","turns":[
 {"match":{"system":"You are a rester","turn":0},"reply":{"text":"BOB RESTS","usage":{"input_tokens":1,"output_tokens":1}}},
 {"match":{"system":"You are a reader","turn":0},"reply":{"tool_calls":[{"name":"Read","input":{"file_path":"notes.txt"}}],
   "usage":{"input_tokens":1000,"output_tokens":100}}},
 {"match":{"system":"You are a"},"reply":{"text":"MATE-NEVER"},"repeat":true},
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"capped"}},
   {"name":"Agent","input":{"description":"rests","name":"bob","subagent_type":"rester","prompt":"rest"}}],
   "usage":{"input_tokens":1,"output_tokens":1}}},
 {"match":{"system":"You are troupe,","turn":1},"reply":{"tool_calls":[
   {"name":"Agent","input":{"description":"reader","name":"ann","subagent_type":"reader","prompt":"read notes.txt"}}],
   "usage":{"input_tokens":1,"output_tokens":1}}},
 {"match":{"system":"You are troupe,"},"reply":{"text":"LEAD WAITS","usage":{"input_tokens":1,"output_tokens":1}},"repeat":true}
]}`)
	out, errOut, err := runIn(t, home, "-p", "--trust", "--agent-teams", "--explicit-teams", "--teammate-mode", "in-process", "--cwd", cwd,
		"--provider", "scripted", "--script", script, "--output-format", "json", "--max-tokens", "1000", "go")
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != agentflags.ExitBudget {
		t.Fatalf("run past --max-tokens: %v; want exit status %d\n%s\n%s", err, agentflags.ExitBudget, out, errOut)
	}
	for _, want := range []string{
		"tokens spent, --max-tokens allows 1000 tokens; no new model call starts, teammates are asked to shut down",
		"asked ann to shut down: budget exceeded", "asked bob to shut down: budget exceeded",
		"ann has shut down", "bob has shut down",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not say %q:\n%s", want, errOut)
		}
	}
	for _, bad := range []string{"died", "did not answer", "killed", "MATE-NEVER"} {
		if strings.Contains(errOut+out, bad) {
			t.Errorf("output says %q:\n%s\n%s", bad, out, errOut)
		}
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("result: %v\n%s", err, out)
	}
	if res["subtype"] != "error_max_tokens" {
		t.Errorf("result subtype = %v; want error_max_tokens", res["subtype"])
	}
	ann, _ := res["usage_by_agent"].(map[string]any)["ann"].(map[string]any)
	if ann["calls"] != 1.0 {
		t.Errorf("usage_by_agent.ann = %v; want 1 call\n%s", ann, out)
	}
	// The lead's conversation has the reason, for a resumed session.
	b, err := os.ReadFile(filepath.Join(home, "sessions", "session-1", "lead.jsonl"))
	if err == nil && !bytes.Contains(b, []byte("The session's budget is spent")) {
		t.Errorf("the lead's transcript does not hold the reason:\n%s", b)
	}
}

// --max-budget-usd stops a run on the default model (no --model): its
// price is in the one price list. The result's total_cost_usd is the sum
// of its usage_by_agent and of its usage_by_model lines.
func TestMaxBudgetUSDDefaultModel(t *testing.T) {
	dir := t.TempDir()
	cwd := filepath.Join(dir, "work")
	writeIn(t, filepath.Join(cwd, "notes.txt"), "alpha\n")
	// claude-sonnet-5-5: $2 and $10 per million; 200k in and 20k out cost $0.60 a call.
	srv := llmtest.NewAnthropicServer(t, func(req *llmtest.AnthropicRequest) llmtest.AnthropicReply {
		r := llmtest.AnthropicToolCall("toolu_1", "Read", `{"file_path":"notes.txt"}`)
		r.Usage = llmtest.AnthropicUsage{InputTokens: 200_000, OutputTokens: 20_000}
		return r
	})
	var out, errOut bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &errOut, Getenv: func(k string) string {
		return map[string]string{"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": srv.URL}[k]
	}}
	err := m.Run(t.Context(), []string{"--home", filepath.Join(dir, "home"), "-p", "--trust", "--cwd", cwd,
		"--output-format", "json", "--max-budget-usd", "1", "read the notes again and again"})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != agentflags.ExitBudget {
		t.Fatalf("run: %v; want exit status %d\n%s\n%s", err, agentflags.ExitBudget, out.String(), errOut.String())
	}
	if n := srv.RequestCount(); n != 2 {
		t.Errorf("the server got %d calls; want 2 ($1.20 after the second, past the $1 cap)", n)
	}
	var res struct {
		Model   string  `json:"model"`
		Subtype string  `json:"subtype"`
		Total   float64 `json:"total_cost_usd"`
		ByAgent map[string]struct {
			CostUSD float64 `json:"cost_usd"`
		} `json:"usage_by_agent"`
		ByModel map[string]struct {
			CostUSD float64 `json:"cost_usd"`
		} `json:"usage_by_model"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("result: %v\n%s", err, out.String())
	}
	if res.Model != "claude-sonnet-5-5" || res.Subtype != "error_max_budget_usd" || math.Abs(res.Total-1.2) > 1e-9 {
		t.Errorf("result: model %s, %s, total_cost_usd %v; want claude-sonnet-5-5 stopped at $1.20", res.Model, res.Subtype, res.Total)
	}
	var byAgent, byModel float64
	for _, s := range res.ByAgent {
		byAgent += s.CostUSD
	}
	for _, s := range res.ByModel {
		byModel += s.CostUSD
	}
	if math.Abs(byAgent-res.Total) > 1e-9 || math.Abs(byModel-res.Total) > 1e-9 {
		t.Errorf("total_cost_usd %v; usage_by_agent adds up to %v, usage_by_model to %v: want one number\n%s", res.Total, byAgent, byModel, out.String())
	}
}

// A USD limit on a model without a price refuses to start, naming the
// model and the modelPrices setting; priced there, the run starts.
func TestMaxBudgetUSDUnpricedModel(t *testing.T) {
	dir := t.TempDir()
	home, cwd := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"model":"house-model-1","turns":[{"reply":{"text":"DONE"},"repeat":true}]}`)
	writeIn(t, filepath.Join(cwd, "x"), "")
	args := []string{"-p", "--trust", "--cwd", cwd, "--provider", "scripted", "--script", script, "--max-budget-usd", "1", "hi"}
	out, errOut, err := runIn(t, home, args...)
	var ue *UsageError
	if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), `model "house-model-1" has no price`) || !strings.Contains(err.Error(), "modelPrices") {
		t.Fatalf("unpriced model with --max-budget-usd: %v; want a usage error naming the model and modelPrices\n%s%s", err, out, errOut)
	}
	if strings.Contains(out, "DONE") {
		t.Error("the model was called")
	}
	writeIn(t, filepath.Join(cwd, ".troupe", "settings.json"), `{"modelPrices":{"house-model-1":{"input":1,"output":2}}}`)
	if out, errOut, err := runIn(t, home, args...); err != nil || !strings.Contains(out, "DONE") {
		t.Errorf("priced in modelPrices: %v\n%s%s", err, out, errOut)
	}
}
