package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/transcript"
)

// Every agent of a run leaves a transcript: the lead and an in-process
// teammate (and the teammate's sub-agent, as its sidechain); troupe
// transcript prints them by session id, by --agent and by name.
func TestTranscripts(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"tx"}},
   {"name":"Agent","input":{"description":"helper","name":"helper","prompt":"LOOK-AROUND"}}]}},
 {"match":{"system":"You are troupe,"},"reply":{"text":"LEAD-DONE"},"repeat":true},
 {"match":{"system":"teammate helper","user":"LOOK-AROUND"},"reply":{"tool_calls":[{"name":"Agent","input":{"description":"scout","prompt":"SCOUT-IT","subagent_type":"general-purpose"}}]}},
 {"match":{"system":"sub-agent"},"reply":{"text":"SCOUT-REPORT"}},
 {"match":{"system":"teammate helper"},"reply":{"text":"HELPER-DONE"},"repeat":true}
]}`)
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		m := &Main{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, NewID: func() string { return "sess-tx" }}
		err := m.Run(t.Context(), append([]string{"--home", dir}, args...))
		return out.String(), err
	}
	if out, err := run("-p", "--trust", "--agent-teams", "--explicit-teams", "--teammate-mode", "in-process", "--allowedTools", "Agent", "--cwd", dir, "--provider", "scripted", "--script", script, "go"); err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out)
	}
	out, err := run("transcript", "sess-tx")
	if err != nil {
		t.Fatalf("troupe transcript: %v\n%s", err, out)
	}
	for _, want := range []string{"== lead (lead), session sess-tx", "→ TeamCreate", "run ended: LEAD-DONE", "other agent(s) in this session; pick one with --agent:", " helper"} {
		if !strings.Contains(out, want) {
			t.Errorf("the lead's transcript lacks %q:\n%s", want, out)
		}
	}
	out, err = run("transcript", "sess-tx", "--agent", "helper")
	if err != nil || !strings.Contains(out, "== helper (teammate)") || !strings.Contains(out, "user: ") || !strings.Contains(out, "LOOK-AROUND") {
		t.Errorf("helper's transcript: %v\n%s", err, out)
	}
	if byName, err := run("transcript", "helper"); err != nil || byName != out {
		t.Errorf("by name: %v\n%s", err, byName)
	}
	// The sub-agent's sidechain names its parent.
	paths, _ := filepath.Glob(filepath.Join(dir, "sessions", "sess-tx", "a*.jsonl"))
	if len(paths) != 1 {
		t.Fatalf("sub-agent transcripts: %v", paths)
	}
	var sub bytes.Buffer
	m := &Main{Stdout: &sub, Stderr: &sub, Getenv: func(string) string { return "" }}
	agentName := strings.TrimSuffix(filepath.Base(paths[0]), ".jsonl")
	if err := m.Run(t.Context(), []string{"--home", dir, "transcript", "sess-tx", "--agent", agentName}); err != nil ||
		!strings.Contains(sub.String(), "(sub-agent, a sidechain of helper)") || !strings.Contains(sub.String(), "SCOUT-REPORT") {
		t.Errorf("the sub-agent's transcript: %v\n%s", err, sub.String())
	}
	js, err := run("--json", "transcript", "sess-tx")
	if err != nil {
		t.Fatal(err)
	}
	var first map[string]any
	if err := json.NewDecoder(strings.NewReader(js)).Decode(&first); err != nil || first["type"] != "user" {
		t.Errorf("--json: %v %v\n%s", first, err, js)
	}
	if _, err := run("transcript", "nosuch"); err == nil || !strings.Contains(err.Error(), "neither a session id") {
		t.Errorf("an unknown transcript: %v", err)
	}
}

// --follow prints the lines an agent appends, as they come.
func TestTranscriptFollow(t *testing.T) {
	home := t.TempDir()
	w, err := transcript.Appender(transcript.Dir(home, "s-f"), transcript.Header{Agent: "lead", Kind: transcript.KindLead, Session: "s-f"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := &cancelOn{w: &bytes.Buffer{}, marker: "LATE-LINE", cancel: cancel}
	done := make(chan error, 1)
	go func() {
		m := &Main{Stdout: out, Stderr: out, Getenv: func(string) string { return "" }}
		done <- m.Run(ctx, []string{"--home", home, "transcript", "s-f", "--follow"})
	}()
	// Once the heading is out, the follower is at work: append a line.
	deadline := time.After(10 * time.Second)
	for !strings.Contains(out.text(), "== lead") {
		select {
		case <-deadline:
			t.Fatalf("no heading:\n%s", out.text())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if _, err := w.Write([]byte(`{"type":"user","time":"2026-12-03T09:00:01Z","message":{"role":"user","content":[{"type":"text","text":"LATE-LINE"}]}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("transcript --follow: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the appended line was not printed:\n%s", out.text())
	}
	if got := out.text(); strings.Count(got, "== lead") != 1 || !strings.Contains(got, "user: LATE-LINE") {
		t.Errorf("follow output:\n%s", got)
	}
}
