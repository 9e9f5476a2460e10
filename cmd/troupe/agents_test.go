package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/troupe-dev/troupe/llm/llmtest"
)

// troupe agents lists built-in, project and user types with their source;
// a malformed file is reported with file and line, the others still load.
func TestAgentsCommand(t *testing.T) {
	root := t.TempDir()
	proj, home := filepath.Join(root, "proj"), filepath.Join(root, "home")
	writeDef(t, filepath.Join(proj, ".claude", "agents", "reviewer.md"), "---\nname: reviewer\ndescription: Reviews\ntools: Read, Grep\nmodel: haiku\n---\nYou review.\n")
	writeDef(t, filepath.Join(home, ".claude", "agents", "reviewer.md"), "---\nname: reviewer\ndescription: user's\n---\nUser's.\n")
	writeDef(t, filepath.Join(home, ".claude", "agents", "docs.md"), "---\nname: docs\ndescription: Writes docs\n---\nYou write docs.\n")
	bad := filepath.Join(proj, ".troupe", "agents", "bad.md")
	writeDef(t, bad, "---\nname: bad\ndescription: d\ntools: [Read\n---\nx\n")
	run := func(args ...string) (string, string, error) {
		var out, errb bytes.Buffer
		m := &Main{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, HomeDir: func() (string, error) { return home, nil }}
		err := m.Run(t.Context(), append([]string{"--home", filepath.Join(home, ".troupe")}, args...))
		return out.String(), errb.String(), err
	}
	out, stderr, err := run("agents", "--cwd", proj)
	if err == nil {
		t.Error("troupe agents with a malformed file: no error")
	}
	if want := bad + ":4: tools: the list has no closing ]"; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q; want %q", stderr, want)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		rows[f[0]] = strings.Join(f[1:4], " ")
	}
	for name, want := range map[string]string{"general-purpose": "built-in all inherit", "Explore": "built-in Read,Glob,Grep,WebFetch,WebSearch,Skill inherit",
		"Plan": "built-in Read,Glob,Grep,WebFetch,WebSearch,Skill inherit", "reviewer": "project Read,Grep haiku", "docs": "user all inherit"} {
		if rows[name] != want {
			t.Errorf("troupe agents row %s = %q; want %q\n%s", name, rows[name], want, out)
		}
	}
	js, _, _ := run("--json", "agents", "--cwd", proj)
	var doc struct {
		Agents []struct{ Name, Source, Path string }
		Errors []string
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || len(doc.Agents) != 5 || len(doc.Errors) != 1 {
		t.Fatalf("--json = %+v, %v\n%s", doc, err, js)
	}
}

// A lead's Agent call selects a project definition: the sub-agent runs
// with the definition's body as its system prompt and only its tools (a
// Write it tries is refused), and an unknown type is refused with the
// known ones.
func TestAgentTypeHeadless(t *testing.T) {
	dir := t.TempDir()
	writeDef(t, filepath.Join(dir, ".claude", "agents", "reviewer.md"), "---\nname: reviewer\ndescription: Reviews\ntools: Read, Grep\n---\nYou are REVIEWER-PROMPT.\n")
	script := filepath.Join(dir, "script.json")
	writeDef(t, script, `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"Agent","input":{"description":"bad","prompt":"x","subagent_type":"nosuch"}},
   {"name":"Agent","input":{"description":"review","prompt":"REVIEW-IT","subagent_type":"reviewer"}}]}},
 {"match":{"system":"You are troupe,","user":"SUB-REPORT"},"reply":{"text":"LEAD-DONE"}},
 {"match":{"system":"REVIEWER-PROMPT","turn":0},"reply":{"tool_calls":[{"name":"Write","input":{"file_path":"`+filepath.Join(dir, "x.txt")+`","content":"no"}}]}},
 {"match":{"system":"REVIEWER-PROMPT","user":"no tool named"},"reply":{"text":"SUB-REPORT"}}
]}`)
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, HomeDir: func() (string, error) { return t.TempDir(), nil }}
	err := m.Run(t.Context(), []string{"--home", filepath.Join(dir, "home"), "-p", "--trust", "--allowedTools", "Agent,Write", "--cwd", dir,
		"--provider", "scripted", "--script", script, "--output-format", "stream-json", "go"})
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out.String())
	}
	for _, want := range []string{`subagent_type \"nosuch\" is unknown; available: general-purpose, Explore, Plan, reviewer`, "LEAD-DONE"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.txt")); err == nil {
		t.Error("the reviewer wrote a file its definition does not allow")
	}
}

// writeDef writes a file, making its folders.
func writeDef(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, content)
}

// A teammate spawned from a definition gets its tools (the team tools
// kept) and its prompt after the teammate's own.
func TestTeammateFromDefinition(t *testing.T) {
	dir := t.TempDir()
	writeDef(t, filepath.Join(dir, ".claude", "agents", "reader.md"), "---\nname: reader\ndescription: Reads\ntools: Read\n---\nYou are READER-BODY.\n")
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"defs"}},
   {"name":"Agent","input":{"description":"read","name":"ann","subagent_type":"reader","prompt":"READ-IT"}}]}},
 {"match":{"system":"You are troupe,","user":"idle"},"reply":{"tool_calls":[{"name":"TeamDelete","input":{}}]},"repeat":true},
 {"match":{"system":"You are troupe,"},"reply":{"text":"LEAD-DONE"},"repeat":true},
 {"match":{"system":"READER-BODY","turn":0},"reply":{"tool_calls":[{"name":"Write","input":{"file_path":"x.txt","content":"no"}}]}},
 {"match":{"system":"READER-BODY","user":"no tool named"},"reply":{"text":"ANN-REFUSED"}},
 {"match":{"system":"teammate ann"},"reply":{"text":"ANN-DONE"},"repeat":true}
]}`)
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, HomeDir: func() (string, error) { return t.TempDir(), nil }}
	err := m.Run(t.Context(), []string{"--home", filepath.Join(dir, "home"), "-p", "--trust", "--agent-teams", "--explicit-teams", "--teammate-mode", "in-process",
		"--allowedTools", "Agent,Write", "--cwd", dir, "--provider", "scripted", "--script", script, "--output-format", "stream-json", "go"})
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "ANN-REFUSED") {
		t.Errorf("the teammate's Write was not refused as outside its definition:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "x.txt")); err == nil {
		t.Error("the reader teammate wrote a file")
	}
}

// A definition's model reaches the sub-agent's requests (on the official
// SDK path); the lead keeps its own.
func TestAgentDefinitionModel(t *testing.T) {
	dir := t.TempDir()
	writeDef(t, filepath.Join(dir, ".claude", "agents", "cheap.md"), "---\nname: cheap\ndescription: Cheap lookups\nmodel: claude-haiku-4-5\n---\nYou are CHEAP-PROMPT.\n")
	var mu sync.Mutex
	models := map[string]string{} // whose request -> its model
	srv := llmtest.NewAnthropicServer(t, func(req *llmtest.AnthropicRequest) llmtest.AnthropicReply {
		var system string
		for _, b := range req.System {
			system += b.Text
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.Contains(system, "CHEAP-PROMPT"):
			models["sub"] = req.Model
			return llmtest.AnthropicText("SUB-REPORT")
		case bytes.Contains(req.Body, []byte("SUB-REPORT")):
			return llmtest.AnthropicText("LEAD-DONE")
		}
		models["lead"] = req.Model
		return llmtest.AnthropicContent(llmtest.AnthropicToolUseBlock("toolu_1", "Agent", `{"description":"look","prompt":"look it up","subagent_type":"cheap"}`))
	})
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &out, HomeDir: func() (string, error) { return t.TempDir(), nil }, Getenv: func(k string) string {
		return map[string]string{"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": srv.URL}[k]
	}}
	if err := m.Run(t.Context(), []string{"--home", filepath.Join(dir, "home"), "-p", "--trust", "--allowedTools", "Agent", "--cwd", dir, "--model", "claude-sonnet-4-6", "go"}); err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if models["sub"] != "claude-haiku-4-5" || models["lead"] != "claude-sonnet-4-6" {
		t.Errorf("models asked for: %v; want the sub-agent on its definition's, the lead on --model", models)
	}
}
