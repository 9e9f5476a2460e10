package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/llm/llmtest"
	"github.com/troupe-dev/troupe/mcp/mcptest"
	"github.com/troupe-dev/troupe/tool/toolsearch"
)

// generatedMCP returns an --mcp-config naming a generated server of n
// tools over HTTP.
func generatedMCP(t *testing.T, n int) string {
	return `{"mcpServers":{"gen":{"type":"http","url":"` + mcptest.GeneratedHTTP(t, n) + `"}}}`
}

// TestToolSearchScripted: with 200 MCP tools, troupe -p offers them by
// name only; a direct call fails saying to load it, ToolSearch loads it,
// and the call then reaches the server.
func TestToolSearchScripted(t *testing.T) {
	dir := t.TempDir()
	home, cwd := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	writeIn(t, filepath.Join(cwd, "README"), "x\n")
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"turn":0,"system":"mcp__gen__update_invoice"},"reply":{"tool_calls":[{"name":"mcp__gen__update_invoice","input":{"workspace_id":"w","title":"t"}}]}},
 {"match":{"tool_result":"mcp__gen__update_invoice","user":"not loaded yet"},"reply":{"tool_calls":[{"name":"ToolSearch","input":{"query":"+invoice update"}}]}},
 {"match":{"tool_result":"ToolSearch","user":"mcp__gen__update_invoice"},"reply":{"tool_calls":[{"name":"mcp__gen__update_invoice","input":{"workspace_id":"w","title":"t"}}]}},
 {"match":{"tool_result":"mcp__gen__update_invoice","user":"update_invoice ok"},"reply":{"text":"invoice updated"}}]}`)
	out, errOut, err := runIn(t, home, "-p", "--trust", "--cwd", cwd, "--provider", "scripted", "--script", script,
		"--mcp-config", generatedMCP(t, 200), "--allowedTools", "mcp__gen", "--output-format", "stream-json", "update the invoice")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	for _, want := range []string{"is a deferred tool and is not loaded yet", `Loaded 1 tool(s)`, `update_invoice ok: {`, "invoice updated"} {
		if !strings.Contains(out, want) {
			t.Errorf("the run lacks %q:\n%s", want, out)
		}
	}
}

// TestToolSearchAnthropic: on the Anthropic API the first request of a
// lead with 200 MCP tools carries ToolSearch and the built-ins only, and
// the deferred names in the system prompt; after ToolSearch the loaded
// tool's schema is sent. It logs the request bytes saved (docs/benchmarks.md).
func TestToolSearchAnthropic(t *testing.T) {
	toolSearchSaves(t, generatedMCP(t, 200), 200)
}

// TestToolSearchEverything: the same with 200 tools from the npm
// reference server server-everything (its 14) and a generated server
// (186).
func TestToolSearchEverything(t *testing.T) {
	everything := mcptest.NPMBin(t, "mcp-server-everything")
	cfg := `{"mcpServers":{"gen":{"type":"http","url":"` + mcptest.GeneratedHTTP(t, 186) + `"},"everything":{"command":"` + everything + `","args":["stdio"]}}}`
	toolSearchSaves(t, cfg, 200)
}

// toolSearchSaves runs a lead with the MCP servers of cfg (at least
// `least` MCP tools) with tool search on and off, checks the deferral and
// logs the bytes of the first request each way.
func toolSearchSaves(t *testing.T, cfg string, least int) {
	run := func(search string) *llmtest.AnthropicServer {
		srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(
			llmtest.AnthropicToolCall("toolu_1", "ToolSearch", `{"query":"select:mcp__gen__list_alert"}`),
			llmtest.AnthropicToolCall("toolu_2", "mcp__gen__list_alert", `{"workspace_id":"w"}`),
			llmtest.AnthropicText("3 alerts"),
		))
		cwd, home := t.TempDir(), t.TempDir()
		env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL, "ENABLE_TOOL_SEARCH": search}
		var out, errOut bytes.Buffer
		m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
			Getenv:  func(k string) string { return env[k] },
			HomeDir: func() (string, error) { return home, nil }, Getwd: func() (string, error) { return cwd, nil },
			Now: time.Now, NewID: func() string { return "session-1" }, Version: "v0.0.0-test"}
		if err := m.Run(t.Context(), []string{"--home", home, "-p", "--trust", "--mcp-config", cfg, "--allowedTools", "mcp__gen", "list alerts"}); err != nil {
			t.Fatalf("%v\n%s\n%s", err, out.String(), errOut.String())
		}
		return srv
	}
	srv := run("")
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests; want 3", len(reqs))
	}
	tools := func(reqs []llmtest.AnthropicRequest, i int) (n int, mcp []string) {
		for _, tl := range reqs[i].Tools {
			if toolsearch.IsMCP(tl.Name) {
				mcp = append(mcp, tl.Name)
			}
		}
		return len(reqs[i].Tools), mcp
	}
	system := ""
	for _, b := range reqs[0].System {
		system += b.Text
	}
	if n, mcp := tools(reqs, 0); len(mcp) != 0 || n > 30 || !strings.Contains(system, "\nmcp__gen__create_issue\n") {
		t.Errorf("first request: %d tools, MCP %v; system names the deferred tools: %v", n, mcp, strings.Contains(system, "mcp__gen__create_issue"))
	}
	if _, mcp := tools(reqs, 2); len(mcp) != 1 || mcp[0] != "mcp__gen__list_alert" {
		t.Errorf("after ToolSearch the MCP tools sent = %v; want list_alert", mcp)
	}
	if tr := reqs[2].LastMessage().Content[0]; tr.Type != "tool_result" || !strings.Contains(tr.Text, "list_alert ok") {
		t.Errorf("the loaded call's result = %+v", tr)
	}
	all := run("false").Requests()
	if len(all) != 3 {
		t.Fatalf("without tool search: %d requests", len(all))
	}
	_, mcp := tools(all, 0)
	if len(mcp) < least {
		t.Fatalf("ENABLE_TOOL_SEARCH=false sends %d MCP tools; want at least %d", len(mcp), least)
	}
	full, lean := len(all[0].Body), len(reqs[0].Body)
	t.Logf("first request with %d MCP tools: %d bytes (~%d tokens) sent whole, %d bytes (~%d tokens) deferred: %d bytes (~%d tokens) saved per request",
		len(mcp), full, full/4, lean, lean/4, full-lean, (full-lean)/4)
	if full-lean < 100000 {
		t.Errorf("deferral saves %d bytes a request; want the schemas of 200 tools (more than 100 kB)", full-lean)
	}
}

// TestNotebookEditScripted: troupe -p edits a notebook through
// NotebookEdit (asking as an edit: allowed by an Edit rule) and reads it
// back as cells.
func TestNotebookEditScripted(t *testing.T) {
	dir := t.TempDir()
	home, cwd := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	nb, err := os.ReadFile(filepath.Join("..", "..", "tool", "filetool", "testdata", "notebooks", "analysis.ipynb"))
	if err != nil {
		t.Fatal(err)
	}
	writeIn(t, filepath.Join(cwd, "nb", "analysis.ipynb"), string(nb))
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"turn":0},"reply":{"tool_calls":[{"name":"NotebookEdit","input":{"notebook_path":"nb/analysis.ipynb","cell_id":"e5f6a7b8","new_source":"import polars as pl"}}]}},
 {"match":{"tool_result":"NotebookEdit","user":"Replaced the source of cell e5f6a7b8"},"reply":{"tool_calls":[{"name":"NotebookEdit","input":{"notebook_path":"nb/analysis.ipynb","new_source":"# Summary","cell_type":"markdown","edit_mode":"insert","cell_id":"4e5f6a7b"}}]}},
 {"match":{"tool_result":"NotebookEdit","user":"Inserted a markdown cell"},"reply":{"tool_calls":[{"name":"Read","input":{"file_path":"nb/analysis.ipynb"}}]}},
 {"match":{"tool_result":"Read","user":"import polars as pl"},"reply":{"text":"edited"}}]}`)
	out, errOut, err := runIn(t, home, "-p", "--trust", "--cwd", cwd, "--provider", "scripted", "--script", script,
		"--allowedTools", "Edit(nb/**)", "--output-format", "stream-json", "switch to polars")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if !strings.Contains(out, `"result":"edited"`) {
		t.Errorf("the run did not end as scripted:\n%s", out)
	}
	got, _ := os.ReadFile(filepath.Join(cwd, "nb", "analysis.ipynb"))
	if !bytes.Contains(got, []byte(`"import polars as pl"`)) || !bytes.Contains(got, []byte(`"# Summary"`)) || !bytes.Contains(got, []byte(`"ename": "ZeroDivisionError"`)) {
		t.Errorf("notebook after the run:\n%s", got)
	}
	// Without a rule, headless asks and is refused: the notebook stays.
	writeIn(t, filepath.Join(cwd, "nb", "analysis.ipynb"), string(nb))
	writeFile(t, script, `{"turns":[
 {"match":{"turn":0},"reply":{"tool_calls":[{"name":"NotebookEdit","input":{"notebook_path":"nb/analysis.ipynb","cell_id":"e5f6a7b8","new_source":"x"}}]}},
 {"match":{"tool_result":"NotebookEdit"},"reply":{"text":"refused"}}]}`)
	if out, errOut, err = runIn(t, home, "-p", "--trust", "--cwd", cwd, "--provider", "scripted", "--script", script, "--output-format", "stream-json", "edit"); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if got, _ := os.ReadFile(filepath.Join(cwd, "nb", "analysis.ipynb")); !bytes.Equal(got, nb) || !strings.Contains(out, "Permission to use NotebookEdit was denied") {
		t.Errorf("a NotebookEdit without a rule changed the notebook or was not denied:\n%s", out)
	}
}

// TestEnterPlanModeScripted: troupe -p refuses EnterPlanMode without a
// rule, saying how to allow it; with the rule the session is in plan mode
// and a Write after it is refused.
func TestEnterPlanModeScripted(t *testing.T) {
	dir := t.TempDir()
	home, cwd := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	writeIn(t, filepath.Join(cwd, "README"), "x\n")
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"turn":0},"reply":{"tool_calls":[{"name":"EnterPlanMode","input":{}}]}},
 {"match":{"turn":1},"reply":{"tool_calls":[{"name":"Write","input":{"file_path":"plan.txt","content":"x"}}]}},
 {"match":{"turn":2},"reply":{"text":"planned"}}]}`)
	out, errOut, err := runIn(t, home, "-p", "--trust", "--cwd", cwd, "--provider", "scripted", "--script", script,
		"--output-format", "stream-json", "--allowedTools", "Write", "plan it")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if !strings.Contains(out, "Permission to use EnterPlanMode was denied") || !strings.Contains(out, `--allowedTools \"EnterPlanMode\"`) {
		t.Errorf("headless EnterPlanMode without a rule:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(cwd, "plan.txt")); err != nil {
		t.Errorf("the Write after a refused EnterPlanMode did not run: %v", err)
	}
	os.Remove(filepath.Join(cwd, "plan.txt"))
	out, errOut, err = runIn(t, home, "-p", "--trust", "--cwd", cwd, "--provider", "scripted", "--script", script,
		"--output-format", "stream-json", "--allowedTools", "Write,EnterPlanMode", "plan it")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if !strings.Contains(out, "Entered plan mode (from default)") || !strings.Contains(out, "plan mode: Write is refused") {
		t.Errorf("EnterPlanMode allowed by rule:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(cwd, "plan.txt")); err == nil {
		t.Error("a Write in plan mode wrote the file")
	}
}

// TestWorktreeScripted: troupe -p's lead moves into a new worktree, writes
// and commits there, is refused a removal that would lose the commit, and
// comes back keeping it.
func TestWorktreeScripted(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	home, cwd := filepath.Join(dir, "home"), filepath.Join(dir, "proj")
	writeIn(t, filepath.Join(cwd, "README"), "x\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.name", "t"}, {"config", "user.email", "t@example.com"}, {"config", "commit.gpgsign", "false"}, {"add", "."}, {"commit", "-q", "-m", "first"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = cwd
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"turn":0},"reply":{"tool_calls":[{"name":"EnterWorktree","input":{"name":"spike"}}]}},
 {"match":{"tool_result":"EnterWorktree","user":"worktree/spike"},"reply":{"tool_calls":[{"name":"Write","input":{"file_path":"spike.txt","content":"s\n"}}]}},
 {"match":{"tool_result":"Write"},"reply":{"tool_calls":[{"name":"Bash","input":{"command":"git add spike.txt && git commit -q -m spike && git branch --show-current"}}]}},
 {"match":{"tool_result":"Bash","user":"worktree/spike"},"reply":{"tool_calls":[{"name":"ExitWorktree","input":{"action":"remove"}}]}},
 {"match":{"tool_result":"ExitWorktree","user":"that no other branch has"},"reply":{"tool_calls":[{"name":"ExitWorktree","input":{"action":"keep"}}]}},
 {"match":{"tool_result":"ExitWorktree","user":"is kept on branch worktree/spike"},"reply":{"tool_calls":[{"name":"Bash","input":{"command":"pwd; ls"}}]}},
 {"match":{"tool_result":"Bash"},"reply":{"text":"kept"}}]}`)
	out, errOut, err := runIn(t, home, "-p", "--trust", "--cwd", cwd, "--provider", "scripted", "--script", script,
		"--allowedTools", "EnterWorktree,ExitWorktree,Write,Bash", "--output-format", "stream-json", "spike it")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	tree := filepath.Join(dir, "proj-worktrees", "worktree", "spike")
	if b, err := os.ReadFile(filepath.Join(tree, "spike.txt")); err != nil || string(b) != "s\n" {
		t.Errorf("the Write in the worktree: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(cwd, "spike.txt")); err == nil {
		t.Error("the Write reached the main checkout")
	}
	if !strings.Contains(out, `"result":"kept"`) {
		t.Errorf("the run did not end as scripted:\n%s", out)
	}
	cmd := exec.Command("git", "log", "--format=%s", "worktree/spike")
	cmd.Dir = cwd
	if log, err := cmd.Output(); err != nil || !strings.HasPrefix(string(log), "spike\n") {
		t.Errorf("the branch's log: %q, %v\n%s", log, err, out)
	}
}

// TestDeferBuiltinsSetting: the toolSearch setting's deferBuiltins keeps
// built-ins (NotebookEdit, EnterPlanMode) out of the requests, named
// only, until ToolSearch loads them; no MCP server is needed.
func TestDeferBuiltinsSetting(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(
		llmtest.AnthropicToolCall("toolu_1", "EnterPlanMode", `{}`),
		llmtest.AnthropicToolCall("toolu_2", "ToolSearch", `{"query":"+notebook"}`),
		llmtest.AnthropicText("loaded"),
	))
	cwd, home := t.TempDir(), t.TempDir()
	writeIn(t, filepath.Join(cwd, ".troupe", "settings.json"), `{"toolSearch":{"deferBuiltins":["NotebookEdit","EnterPlanMode"]}}`)
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL}
	var out, errOut bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
		Getenv:  func(k string) string { return env[k] },
		HomeDir: func() (string, error) { return home, nil }, Getwd: func() (string, error) { return cwd, nil },
		Now: time.Now, NewID: func() string { return "session-1" }, Version: "v0.0.0-test"}
	if err := m.Run(t.Context(), []string{"--home", home, "-p", "--trust", "plan"}); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), errOut.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	has := func(i int, name string) bool {
		for _, tl := range reqs[i].Tools {
			if tl.Name == name {
				return true
			}
		}
		return false
	}
	system := ""
	for _, b := range reqs[0].System {
		system += b.Text
	}
	if has(0, "NotebookEdit") || has(0, "EnterPlanMode") || !has(0, "ToolSearch") || !has(0, "Read") ||
		!strings.Contains(system, "\nNotebookEdit\nEnterPlanMode\n") {
		t.Errorf("first request: NotebookEdit %v, EnterPlanMode %v, ToolSearch %v; the system names them: %v",
			has(0, "NotebookEdit"), has(0, "EnterPlanMode"), has(0, "ToolSearch"), strings.Contains(system, "NotebookEdit"))
	}
	if tr := reqs[1].LastMessage().Content[0]; !strings.Contains(tr.Text, `EnterPlanMode is a deferred tool and is not loaded yet`) {
		t.Errorf("EnterPlanMode before loading = %+v", tr)
	}
	if !has(2, "NotebookEdit") || has(2, "EnterPlanMode") {
		t.Errorf("after ToolSearch +notebook: NotebookEdit %v, EnterPlanMode %v", has(2, "NotebookEdit"), has(2, "EnterPlanMode"))
	}
}
