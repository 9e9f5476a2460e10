package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/llm/llmtest"
)

// --fork-subagents against the fake Messages API: the fork's request
// repeats the lead's system blocks, tools and conversation byte for byte
// (cache breakpoints aside, which move to the new end), so that the
// provider's prompt cache serves the prefix; its breakpoints are on the
// stable system block, the last tool and its last message block.
func TestForkPrefixAnthropic(t *testing.T) {
	root := t.TempDir()
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(
		llmtest.AnthropicToolCall("toolu_f", "Agent", `{"description": "side task", "prompt": "SIDE-TASK"}`),
		llmtest.AnthropicText("FORK-REPORT"),
		llmtest.AnthropicText("LEAD-DONE"),
	))
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL, "SHELL": "/bin/bash"}
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &out, Getenv: func(k string) string { return env[k] }, HomeDir: func() (string, error) { return root, nil }}
	if err := m.Run(t.Context(), []string{"-p", "--trust", "--fork-subagents", "--allowedTools", "Agent", "--home", filepath.Join(root, "home"), "--cwd", root, "go"}); err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests; want 3 (lead, fork, lead)", len(reqs))
	}
	lead, fork, lead2 := reqs[0], reqs[1], reqs[2]
	raw := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	if raw(fork.System) != raw(lead.System) {
		t.Errorf("fork system differs:\nlead %s\nfork %s", raw(lead.System), raw(fork.System))
	}
	if raw(fork.Tools) != raw(lead.Tools) {
		t.Errorf("fork tools differ from the lead's")
	}
	// Messages: the lead's next request and the fork share the first two
	// (the prompt and the assistant's Agent call), byte for byte without
	// the cache markers.
	strip := func(ms []llmtest.AnthropicMessage) string {
		var parts []string
		for _, m := range ms {
			for _, b := range m.Content {
				var v map[string]any
				_ = json.Unmarshal(b.Raw, &v)
				delete(v, "cache_control")
				parts = append(parts, m.Role+":"+raw(v))
			}
		}
		return strings.Join(parts, "\n")
	}
	if len(fork.Messages) != 3 || strip(fork.Messages[:2]) != strip(lead2.Messages[:2]) {
		t.Errorf("fork prefix differs from the lead's conversation:\nlead %s\nfork %s", strip(lead2.Messages), strip(fork.Messages))
	}
	lastMsg := fork.Messages[2].Content
	if len(lastMsg) != 2 || lastMsg[0].Type != "tool_result" || !strings.Contains(lastMsg[1].Text, "SIDE-TASK") {
		t.Fatalf("the fork's first message = %s", raw(lastMsg))
	}
	if lastMsg[1].CacheControl == nil || fork.System[0].CacheControl == nil || fork.Tools[len(fork.Tools)-1].CacheControl == nil {
		t.Errorf("cache breakpoints: last block %v, system %v, last tool %v; want all three", lastMsg[1].CacheControl, fork.System[0].CacheControl, fork.Tools[len(fork.Tools)-1].CacheControl)
	}
	if !strings.Contains(strip(lead2.Messages[2:]), "FORK-REPORT") || !strings.Contains(out.String(), "LEAD-DONE") {
		t.Errorf("the lead did not get the fork's report:\n%s", strip(lead2.Messages))
	}
}

// Forks are off in coordinator mode: a worker started without a
// subagent_type has a fresh conversation, not the coordinator's.
func TestForkOffInCoordinator(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"user":"fork-directive"},"reply":{"text":"FORKED"},"repeat":true},
 {"match":{"user":"WORK-ON-IT","turn":0},"reply":{"text":"FRESH-WORKER"}},
 {"match":{"turn":0},"reply":{"tool_calls":[{"name":"Agent","input":{"description":"work","prompt":"WORK-ON-IT"}}]}},
 {"match":{"user":"FRESH-WORKER"},"reply":{"text":"LEAD-DONE"}},
 {"match":{},"reply":{"text":"WAITING"},"repeat":true}
]}`)
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, HomeDir: func() (string, error) { return dir, nil }}
	if err := m.Run(t.Context(), []string{"-p", "--trust", "--coordinator", "--fork-subagents", "--home", filepath.Join(dir, "home"), "--cwd", dir,
		"--provider", "scripted", "--script", script, "go"}); err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "LEAD-DONE") || strings.Contains(out.String(), "FORKED") {
		t.Errorf("output:\n%s", out.String())
	}
}

// forkSubagents in the settings turns forks on as the flag does.
func TestForkFromSettings(t *testing.T) {
	root := t.TempDir()
	writeDef(t, filepath.Join(root, ".troupe", "settings.json"), `{"forkSubagents": true}`)
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(
		llmtest.AnthropicToolCall("toolu_f", "Agent", `{"description": "side task", "prompt": "SIDE-TASK"}`),
		llmtest.AnthropicText("FORK-REPORT"),
		llmtest.AnthropicText("LEAD-DONE"),
	))
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL}
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &out, Getenv: func(k string) string { return env[k] }, HomeDir: func() (string, error) { return root, nil }}
	if err := m.Run(t.Context(), []string{"-p", "--trust", "--allowedTools", "Agent", "--home", filepath.Join(root, "home"), "--cwd", root, "go"}); err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests; want 3 (lead, fork, lead)", len(reqs))
	}
	raw := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	if raw(reqs[1].System[0].Text) != raw(reqs[0].System[0].Text) {
		t.Error("the sub-agent's system prompt is not the lead's: it was not a fork")
	}
}
