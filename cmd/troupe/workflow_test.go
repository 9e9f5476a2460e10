package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/cli"
)

// workflowRun runs troupe with args in cwd against home (kept between
// runs, so that a resume finds the runs of the one before).
func workflowRun(t *testing.T, home, cwd string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	// The agents' goroutines write notices on stderr as the run prints.
	out, errOut := newSyncBuffer(), newSyncBuffer()
	m := &Main{Stdout: out, Stderr: errOut, Getenv: func(string) string { return "" },
		HomeDir: func() (string, error) { return home, nil }, Getwd: func() (string, error) { return cwd, nil },
		Version: "v0.0.0-test"}
	err = m.Run(t.Context(), args)
	return out.String(), errOut.String(), err
}

const reviewVerify = `export const meta = {
  name: "review-verify",
  description: "Review files, verify each finding, report",
  phases: [{ title: "Review" }, { title: "Verify" }, { title: "Report" }],
}
const verified = await pipeline(args.files,
  (f) => agent("Review " + f + " for bugs", { label: "review " + f, phase: "Review",
         schema: { type: "object", properties: { bug: { type: "string" } }, required: ["bug"] } }),
  (finding, f) => agent("Verify the finding in " + f + ": " + finding.bug, { label: "verify " + f, phase: "Verify",
         schema: { type: "object", properties: { real: { type: "boolean" } }, required: ["real"] } }),
)
phase("Report")
const report = await agent("Write the report: " + JSON.stringify(verified), { label: "report" })
log("report written")
return { verified, report }
`

const reviewModel = `{"model": "scripted-wf", "turns": [
 {"match": {"user": "Review a.go"}, "reply": {"text": "{\"bug\": \"nil map\"}"}},
 {"match": {"user": "Review b.go"}, "reply": {"text": "{\"bug\": \"leak\"}"}},
 {"match": {"user": "Verify the finding in a.go"}, "reply": {"text": "{\"real\": true}"}},
 {"match": {"user": "Verify the finding in b.go"}, "reply": {"text": "{\"real\": false}"}},
 {"match": {"user": "Write the report"}, "reply": {"text": "One real bug, in a.go."}}
]}`

// downModel fails every request: a run on it that succeeds made none.
const downModel = `{"model": "scripted-down", "turns": [{"match": {}, "reply": {"error": "no model request was expected"}, "repeat": true}]}`

func TestWorkflowRunResumeScripted(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(proj, "model.json"), []byte(reviewModel), 0o644)
	os.WriteFile(filepath.Join(proj, "down.json"), []byte(downModel), 0o644)
	os.MkdirAll(filepath.Join(proj, ".claude", "workflows"), 0o755)
	os.WriteFile(filepath.Join(proj, ".claude", "workflows", "review.js"), []byte(reviewVerify), 0o644)

	out, errOut, err := workflowRun(t, home, proj, "workflow", "run", "review", "--trust", "--args", `{"files":["a.go","b.go"]}`,
		"--provider", "scripted", "--script", filepath.Join(proj, "model.json"), "--output-format", "stream-json")
	if err != nil {
		t.Fatalf("workflow run: %v\n%s\n%s", err, out, errOut)
	}
	lines := streamLines(t, out)
	first, last := lines[0], lines[len(lines)-1]
	if first["subtype"] != "workflow_init" || first["name"] != "review-verify" {
		t.Errorf("first line = %v", first)
	}
	want := `{"report":"One real bug, in a.go.","verified":[{"real":true},{"real":false}]}`
	if got, _ := json.Marshal(last["result"]); last["type"] != "result" || last["is_error"] != false || string(got) != want {
		t.Errorf("result line = %v; want result %s", last, want)
	}
	phases := map[string]int{}
	for _, l := range lines {
		if l["subtype"] == "agent_done" {
			phases[l["phase"].(string)]++
		}
	}
	if phases["Review"] != 2 || phases["Verify"] != 2 || phases["Report"] != 1 {
		t.Errorf("agents done by phase = %v", phases)
	}
	runID := first["run_id"].(string)
	runDir := first["run_dir"].(string)
	for _, f := range []string{"script.js", "journal.jsonl", "output.log", "result.json", "run.json"} {
		if _, err := os.Stat(filepath.Join(runDir, f)); err != nil {
			t.Errorf("run folder: %v", err)
		}
	}

	// The resume answers every call from the journal: on a model that
	// fails every request, it still completes.
	out, errOut, err = workflowRun(t, home, proj, "workflow", "resume", runID, "--provider", "scripted", "--script", filepath.Join(proj, "down.json"), "--output-format", "json")
	if err != nil {
		t.Fatalf("workflow resume: %v\n%s\n%s", err, out, errOut)
	}
	var res map[string]any
	if json.Unmarshal([]byte(out), &res) != nil || res["cached"] != 5.0 || res["agents"] != 5.0 {
		t.Errorf("resume result = %s; want 5 agents, 5 cached", out)
	}
	if got, _ := json.Marshal(res["result"]); string(got) != want {
		t.Errorf("resume value = %s; want %s", got, want)
	}

	out, _, err = workflowRun(t, home, proj, "--json", "workflow", "list")
	var list struct {
		Named []struct{ Name string }
		Runs  []struct{ ID, Status string }
	}
	if err != nil || json.Unmarshal([]byte(out), &list) != nil || len(list.Named) != 1 || list.Named[0].Name != "review" || len(list.Runs) != 2 {
		t.Errorf("workflow list = %s, %v", out, err)
	}
}

func TestWorkflowExitStatus(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(proj, "model.json"), []byte(reviewModel), 0o644)
	os.WriteFile(filepath.Join(proj, "bad.js"), []byte("export const meta = { name: 'bad' }\nconst x = await agent('Review a.go')\nnull.boom\n"), 0o644)
	_, errOut, err := workflowRun(t, home, proj, "workflow", "run", "bad.js", "--trust", "--provider", "scripted", "--script", filepath.Join(proj, "model.json"))
	var ee *cli.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || !strings.Contains(errOut, "bad.js:3:") {
		t.Errorf("script error: %v, stderr %q; want exit 1 with the stack at bad.js:3", err, errOut)
	}
	// A token budget of 1 is spent by the first agent: the second call
	// rejects with budget and the run exits 6.
	os.WriteFile(filepath.Join(proj, "two.js"), []byte("export const meta = { name: 'two' }\nawait agent('Review a.go')\nawait agent('Review b.go')\n"), 0o644)
	_, errOut, err = workflowRun(t, home, proj, "workflow", "run", "two.js", "--provider", "scripted", "--script", filepath.Join(proj, "model.json"), "--max-tokens", "1")
	if !errors.As(err, &ee) || ee.Code != 6 || !strings.Contains(errOut, "budget") {
		t.Errorf("budget: %v, stderr %q; want exit 6 naming the budget", err, errOut)
	}
}

func TestLeadWorkflowTool(t *testing.T) {
	proj := t.TempDir()
	script := `export const meta = { name: "pair", phases: [{ title: "Check" }] }\nconst r = await parallel(args.map(x => () => agent("Check item " + x, { label: x, phase: "Check" })))\nreturn r.join(" + ")`
	input, _ := json.Marshal(map[string]any{"script": strings.ReplaceAll(script, `\n`, "\n"), "args": []string{"x", "y"}})
	model := `{"model": "scripted-lead", "turns": [
	  {"match": {"turn": 0, "user": "run the pair workflow"}, "reply": {"text": "Starting it.", "tool_calls": [{"id": "toolu_w", "name": "Workflow", "input": ` + string(input) + `}]}},
	  {"match": {"user": "Check item x"}, "reply": {"text": "x is fine"}},
	  {"match": {"user": "Check item y"}, "reply": {"text": "y is fine"}},
	  {"match": {"user": "x is fine + y is fine"}, "reply": {"text": "The workflow found x and y fine."}},
	  {"match": {"tool_result": "Workflow"}, "reply": {"text": "Started; waiting for it."}},
	  {"match": {"user": "say hi"}, "reply": {"text": "hi"}}
	]}`
	os.WriteFile(filepath.Join(proj, "model.json"), []byte(model), 0o644)
	// The notification may come with the tool's result or after it: the
	// turn that reads it is first, so either way it ends the run.
	// Without the opt-in the lead has no Workflow tool.
	out, err := headlessRun(t, proj, nil, "", "-p", "--trust", "--provider", "scripted", "--script", filepath.Join(proj, "model.json"), "--output-format", "stream-json", "say hi")
	if init := streamLines(t, out)[0]; err != nil || init["subtype"] != "init" || strings.Contains(fmt.Sprint(init["tools"]), "Workflow") {
		t.Errorf("without the opt-in: %v, first line %v", err, init)
	}
	// The setting workflows: true opts in too.
	os.MkdirAll(filepath.Join(proj, ".troupe"), 0o755)
	os.WriteFile(filepath.Join(proj, ".troupe", "settings.json"), []byte(`{"workflows": true, "workflowConcurrency": 2}`), 0o644)
	out, err = headlessRun(t, proj, nil, "", "-p", "--trust", "--provider", "scripted", "--script", filepath.Join(proj, "model.json"), "--output-format", "stream-json", "say hi")
	if init := streamLines(t, out)[0]; err != nil || !strings.Contains(fmt.Sprint(init["tools"]), "Workflow") {
		t.Errorf("with the setting: %v, first line %v", err, init)
	}
	os.Remove(filepath.Join(proj, ".troupe", "settings.json"))
	// Starting one is a call that asks, as the Agent tool is: -p allows
	// it with --allowedTools. The prompt asks for a workflow: that opts in
	// (as --workflows would).
	out, err = headlessRun(t, proj, nil, "", "-p", "--trust", "--allowedTools", "Workflow", "--provider", "scripted", "--script", filepath.Join(proj, "model.json"), "--output-format", "stream-json", "run the pair workflow")
	if err != nil {
		t.Fatalf("troupe -p (a prompt asking for a workflow): %v\n%s", err, out)
	}
	lines := streamLines(t, out)
	if last := lines[len(lines)-1]; last["result"] != "The workflow found x and y fine." {
		t.Errorf("result = %v", last)
	}
	// stream-json carries the task's progress: its phase counts.
	done := false
	for _, l := range lines {
		if l["subtype"] != "task_progress" {
			continue
		}
		w := l["workflow"].(map[string]any)
		p := w["phases"].([]any)[0].(map[string]any)
		if p["title"] == "Check" && p["done"] == 2.0 && len(w["agents"].([]any)) == 2 {
			done = true
			// Each agent names its id: its transcript's (what /workflows opens).
			for _, a := range w["agents"].([]any) {
				if id, _ := a.(map[string]any)["agent_id"].(string); !strings.HasPrefix(id, "a") {
					t.Errorf("a done workflow agent without its agent_id: %v", a)
				}
			}
		}
	}
	if !done {
		t.Errorf("no task_progress with both agents of phase Check done:\n%s", out)
	}
	var res map[string]any
	// A coordinator lead has it too; its workflow agents are workers.
	out, err = headlessRun(t, proj, nil, "", "-p", "--trust", "--coordinator", "--workflows", "--allowedTools", "Workflow", "--provider", "scripted", "--script", filepath.Join(proj, "model.json"), "--output-format", "json", "run the pair workflow")
	res = nil
	if err != nil || json.Unmarshal([]byte(out), &res) != nil || res["result"] != "The workflow found x and y fine." {
		t.Errorf("coordinator: %v, result = %s", err, out)
	}
}

// TestWorkflowResumeAfterKill9 kills a troupe workflow run (SIGKILL) while
// its second agent works, then resumes the run: the first agent's answer
// comes from the journal (a model request for it would fail), the second
// runs again.
func TestWorkflowResumeAfterKill9(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(proj, "steps.js"), []byte("export const meta = { name: 'steps' }\nconst a = await agent('step one')\nconst b = await agent('step two after ' + a)\nreturn [a, b]\n"), 0o644)
	os.WriteFile(filepath.Join(proj, "slow.json"), []byte(`{"turns": [
	  {"match": {"user": "step one"}, "reply": {"text": "one done"}},
	  {"match": {"user": "step two"}, "reply": {"text": "too late", "delay_ms": 60000}}]}`), 0o644)
	os.WriteFile(filepath.Join(proj, "again.json"), []byte(`{"turns": [
	  {"match": {"user": "step one"}, "reply": {"error": "step one was asked again"}, "repeat": true},
	  {"match": {"user": "step two after one done"}, "reply": {"text": "two done"}}]}`), 0o644)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, "--home", filepath.Join(home, ".troupe"), "workflow", "run", "steps.js", "--trust", "--provider", "scripted",
		"--script", filepath.Join(proj, "slow.json"), "--output-format", "stream-json")
	cmd.Dir = proj
	cmd.Env = append(os.Environ(), asTroupeEnv+"=1", "TROUPE_HOME="+home, "HOME="+home)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	runID := ""
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		if m["subtype"] == "workflow_init" {
			runID, _ = m["run_id"].(string)
		}
		if m["subtype"] == "agent_started" && m["index"] == 1.0 {
			break // the first answer is in the journal: it settled before this call was made
		}
	}
	cmd.Process.Kill() // SIGKILL: no cleanup runs
	cmd.Wait()
	if runID == "" {
		t.Fatal("the run never started its second agent")
	}
	out, errOut, err := workflowRun(t, home, proj, "workflow", "resume", runID, "--provider", "scripted",
		"--script", filepath.Join(proj, "again.json"), "--output-format", "json")
	if err != nil {
		t.Fatalf("resume: %v\n%s\n%s", err, out, errOut)
	}
	var res map[string]any
	if json.Unmarshal([]byte(out), &res) != nil || res["cached"] != 1.0 || fmt.Sprint(res["result"]) != "[one done two done]" {
		t.Errorf("resume = %s; want 1 cached and [one done, two done]", out)
	}
}
