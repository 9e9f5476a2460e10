package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/cli/agentflags"
	"github.com/troupe-dev/troupe/task"
)

// A session of a project, then troupe dream: the dream reads the
// session's transcript (the session's own folder: a Grep over the whole
// sessions folder, every project's, is refused) and writes the memory
// folder; the next session's
// lead has that memory in its system prompt. A second dream with no new
// session has nothing to do.
func TestDreamEndToEnd(t *testing.T) {
	root := t.TempDir()
	proj, home := filepath.Join(root, "proj"), filepath.Join(root, "home")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		m := &Main{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, HomeDir: func() (string, error) { return root, nil }}
		err := m.Run(t.Context(), append([]string{"--home", home}, args...))
		return out.String(), err
	}
	first := filepath.Join(root, "first.json")
	writeFile(t, first, `{"turns":[{"reply":{"text":"We decided: THE-FACT."}}]}`)
	if out, err := run("-p", "--trust", "--cwd", proj, "--provider", "scripted", "--script", first, "remember THE-FACT"); err != nil {
		t.Fatalf("first session: %v\n%s", err, out)
	}
	dreamScript := filepath.Join(root, "dream.json")
	writeFile(t, dreamScript, `{"turns":[
 {"match":{"turn":0},"reply":{"tool_calls":[{"name":"Grep","input":{"pattern":"THE-FACT","path":"`+filepath.Join(home, "sessions")+`"}}]}},
 {"match":{"user":"Permission to use Grep was denied"},"reply":{"tool_calls":[{"name":"Grep","input":{"pattern":"THE-FACT","path":"{{capture:- (/\\S+)}}"}}]}},
 {"match":{"tool_result":"Grep","user":"lead"},"reply":{"tool_calls":[
   {"name":"Write","input":{"file_path":"MEMORY.md","content":"- [decisions](decisions.md)\n"}},
   {"name":"Write","input":{"file_path":"decisions.md","content":"MEMORY-SAYS-THE-FACT\n"}},
   {"name":"Write","input":{"file_path":"`+filepath.Join(proj, "evil.md")+`","content":"x"}}]}},
 {"match":{"tool_result":"Write"},"reply":{"text":"Consolidated."}}
]}`)
	out, err := run("dream", "--cwd", proj, "--provider", "scripted", "--script", dreamScript)
	if err != nil || !strings.Contains(out, "memory consolidated from 1 session(s); files: MEMORY.md, decisions.md") {
		t.Fatalf("troupe dream: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(proj, "evil.md")); !os.IsNotExist(err) {
		t.Errorf("the dream wrote outside the memory folder: %v", err)
	}
	next := filepath.Join(root, "next.json")
	writeFile(t, next, `{"turns":[
 {"match":{"system":"MEMORY-SAYS-THE-FACT"},"reply":{"text":"REMEMBERED"}},
 {"match":{},"reply":{"text":"FORGOT"}}
]}`)
	if out, err := run("-p", "--trust", "--cwd", proj, "--provider", "scripted", "--script", next, "what did we decide?"); err != nil || !strings.Contains(out, "REMEMBERED") {
		t.Errorf("next session: %v\n%s", err, out)
	}
	// Only the last session is new, and it is of this project.
	writeFile(t, dreamScript, `{"turns":[{"reply":{"text":"Nothing new."}}]}`)
	out, err = run("dream", "--cwd", proj, "--provider", "scripted", "--script", dreamScript)
	if err != nil || !strings.Contains(out, "memory consolidated from 1 session(s)") {
		t.Errorf("second dream: %v\n%s", err, out)
	}
	out, err = run("dream", "--cwd", proj, "--provider", "scripted", "--script", dreamScript)
	if err != nil || !strings.Contains(out, "nothing to consolidate") {
		t.Errorf("third dream: %v\n%s", err, out)
	}
}

// With the autoDream setting on and a dream due, a session dreams in its
// task registry and the memory is written before the run ends.
func TestAutoDream(t *testing.T) {
	root := t.TempDir()
	proj, home := filepath.Join(root, "proj"), filepath.Join(root, "home")
	writeDef(t, filepath.Join(proj, ".troupe", "settings.json"), `{"autoDream": true, "autoDreamMinSessions": 1, "autoDreamMinHours": 1}`)
	script := filepath.Join(root, "s.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"memory consolidation agent"},"reply":{"tool_calls":[{"name":"Write","input":{"file_path":"MEMORY.md","content":"AUTO-DREAMT\n"}}]}},
 {"match":{"system":"memory consolidation agent","tool_result":"Write"},"reply":{"text":"done"}},
 {"match":{},"reply":{"text":"OK"},"repeat":true}
]}`)
	run := func() string {
		var out bytes.Buffer
		m := &Main{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, HomeDir: func() (string, error) { return root, nil }}
		if err := m.Run(t.Context(), []string{"--home", home, "-p", "--trust", "--cwd", proj, "--provider", "scripted", "--script", script, "hi"}); err != nil {
			t.Fatalf("troupe -p: %v\n%s", err, out.String())
		}
		return out.String()
	}
	run() // no session before it: nothing due
	if _, err := os.Stat(filepath.Join(home, "projects")); !os.IsNotExist(err) {
		t.Fatalf("the first session dreamed: %v", err)
	}
	run() // one session since: due
	matches, _ := filepath.Glob(filepath.Join(home, "projects", "*", "memory", "MEMORY.md"))
	if len(matches) != 1 {
		t.Fatalf("memory files after the second session: %v", matches)
	}
	b, err := os.ReadFile(matches[0])
	if err != nil || string(b) != "AUTO-DREAMT\n" {
		t.Errorf("MEMORY.md after the second session = %q, %v", b, err)
	}
}

// /dream starts a dream in the session's task list; a second one while
// it runs is refused with the reason.
func TestSlashDream(t *testing.T) {
	root := t.TempDir()
	proj, home := filepath.Join(root, "proj"), filepath.Join(root, "home")
	script := filepath.Join(root, "s.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"memory consolidation agent"},"reply":{"text":"slow","delay_ms":60000}},
 {"match":{},"reply":{"text":"OK"},"repeat":true}
]}`)
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, HomeDir: func() (string, error) { return root, nil }}
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(t.Context(), []string{"--home", home, "-p", "--trust", "--cwd", proj, "--provider", "scripted", "--script", script, "hi"}); err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out.String())
	}
	a := newApp(*m)
	a.HomeFlag = home
	trustTemp(t, a.HomeFlag) // main_test.go
	reg := task.New(task.Config{Dir: t.TempDir(), PollInterval: -1})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		reg.Close(ctx)
	}()
	h := &headless{model: agentflags.Model{Provider: "scripted", Script: script}}
	note := a.slashDream(h, proj, "now", reg)
	if !strings.HasPrefix(note, "Dreaming (task d") {
		t.Fatalf("/dream = %q", note)
	}
	if len(reg.List()) != 1 || reg.List()[0].Type != task.Dream || reg.List()[0].Status != task.Running {
		t.Errorf("tasks = %+v; want one running dream", reg.List())
	}
	if again := a.slashDream(h, proj, "now", reg); !strings.Contains(again, "another session is dreaming") {
		t.Errorf("a second /dream = %q", again)
	}
}
