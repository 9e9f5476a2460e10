package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/cli/hookscmd"
	"github.com/troupe-dev/troupe/hooks"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/swarm"
)

// hookRun runs `troupe -p` in dir with a scripted model and returns
// stdout and stderr.
func hookRun(t *testing.T, dir, script string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	sp := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(sp, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	home := t.TempDir()
	m := &Main{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
		Getenv:  func(k string) string { return map[string]string{"TROUPE_HOME": filepath.Join(home, ".troupe")}[k] },
		HomeDir: func() (string, error) { return home, nil },
		Getwd:   func() (string, error) { return dir, nil },
		Now:     time.Now,
		NewID:   func() string { return "session-1" },
		Version: "v0.0.0-test",
	}
	args = append([]string{"-p", "--trust", "--script", sp, "--output-format", "stream-json"}, args...)
	err = m.Run(t.Context(), args)
	return out.String(), errOut.String(), err
}

// hookProject makes a project folder with a build folder, the hook
// scripts (name -> body, written under hooks/ as executables) and
// .claude/settings.json holding settings, in which $HOOKS stands for
// the scripts' folder.
func hookProject(t *testing.T, settings string, scripts map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"build", "hooks", ".claude"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "build", "out.o"), []byte("obj"), 0o644)
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, "hooks", name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	settings = strings.ReplaceAll(settings, "$HOOKS", filepath.Join(dir, "hooks"))
	if err := os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// hooksJSON returns a settings file with one hook group.
func hooksJSON(event, matcher, command string, timeout float64) string {
	cmd, _ := json.Marshal(command)
	return fmt.Sprintf(`{"permissions":{"defaultMode":"bypassPermissions"},"hooks":{%q:[{"matcher":%q,"hooks":[{"type":"command","command":%s,"timeout":%v}]}]}}`,
		event, matcher, cmd, timeout)
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestHooksPreToolUse(t *testing.T) {
	tests := []struct {
		name, hook string
		removed    bool
		want       string // in the tool result
		file       string // a file the call made
	}{
		{name: "exit 2 blocks rm", hook: `grep -q '"command":"rm ' && { echo "rm is not allowed here; use git clean" >&2; exit 2; }; exit 0`,
			want: "Blocked by a PreToolUse hook: rm is not allowed here; use git clean"},
		{name: "other command passes", hook: `grep -q '"command":"ls ' && exit 2; exit 0`, removed: true},
		{name: "JSON deny", hook: `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"builds are precious"}}'`,
			want: "Blocked by a PreToolUse hook: builds are precious"},
		{name: "rewrites the input", hook: `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"touch rewritten"}}}'`,
			file: "rewritten"},
		{name: "exit 1 is a warning and the call runs", hook: `echo oops >&2; exit 1`, removed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := hookProject(t, hooksJSON("PreToolUse", "Bash", "$HOOKS/pre.sh", 10), map[string]string{"pre.sh": tt.hook})
			out, _, err := hookRun(t, dir, rmScript, "clean the build")
			if err != nil {
				t.Fatalf("troupe -p: %v\n%s", err, out)
			}
			res, ok := toolResult(t, out, "toolu_rm")
			if !ok {
				t.Fatalf("no tool result for the rm call in:\n%s", out)
			}
			if removed := !exists(filepath.Join(dir, "build")); removed != tt.removed {
				t.Errorf("build removed = %v; want %v (tool result %q)", removed, tt.removed, res)
			}
			if tt.want != "" && !strings.Contains(res, tt.want) {
				t.Errorf("tool result %q; want it to contain %q", res, tt.want)
			}
			if tt.file != "" && !exists(filepath.Join(dir, tt.file)) {
				t.Errorf("%s was not made: the rewritten input did not run (result %q)", tt.file, res)
			}
		})
	}
}

func TestHooksPostToolUseFormatter(t *testing.T) {
	const script = `{"model": "scripted", "turns": [
  {"match": {"turn": 0}, "reply": {"tool_calls": [{"id": "toolu_w", "name": "Write", "input": {"file_path": "main.txt", "content": "hello   world\n"}}]}},
  {"match": {"tool_result": "Write"}, "reply": {"text": "Written."}}]}`
	// The "formatter" squeezes blanks in the file the call wrote.
	fmtHook := `f=$(sed -n 's/.*"file_path":"\([^"]*\)".*/\1/p'); case "$f" in /*) ;; *) f="$CLAUDE_PROJECT_DIR/$f";; esac
tr -s ' ' < "$f" > "$f.tmp" && mv "$f.tmp" "$f"
echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"formatted '"$(basename "$f")"'"}}'`
	dir := hookProject(t, hooksJSON("PostToolUse", "Edit|Write", "$HOOKS/fmt.sh", 10), map[string]string{"fmt.sh": fmtHook})
	out, errOut, err := hookRun(t, dir, script, "write it")
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s\n%s", err, out, errOut)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "main.txt"))
	if string(b) != "hello world\n" {
		t.Errorf("main.txt = %q; want the formatter's %q (stderr %s)", b, "hello world\n", errOut)
	}
	if res, _ := toolResult(t, out, "toolu_w"); !strings.Contains(res, "formatted main.txt") {
		t.Errorf("tool result %q; want the hook's context", res)
	}
}

func TestHooksUserPromptSubmit(t *testing.T) {
	const script = `{"model": "scripted", "turns": [
  {"match": {"user": "Project rule: run make test"}, "reply": {"text": "saw the rule"}},
  {"match": {"turn": 0}, "reply": {"text": "no rule"}}]}`
	tests := []struct {
		name, hook, want string
		wantErr          bool
	}{
		{name: "adds context", hook: `grep -q '"prompt":"fix it"' && echo "Project rule: run make test"`, want: `"result":"saw the rule"`},
		{name: "blocks the prompt", hook: `echo "prompts may not mention secrets" >&2; exit 2`, want: "prompts may not mention secrets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := hookProject(t, hooksJSON("UserPromptSubmit", "", "$HOOKS/p.sh", 10), map[string]string{"p.sh": tt.hook})
			out, errOut, err := hookRun(t, dir, script, "fix it")
			if err != nil {
				t.Fatalf("troupe -p: %v\n%s\n%s", err, out, errOut)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("output %s; want %q", out, tt.want)
			}
		})
	}
}

func TestHooksStopSendsBackOnce(t *testing.T) {
	const script = `{"model": "scripted", "turns": [
  {"match": {"user": "Stop hook feedback"}, "reply": {"text": "tests pass now"}},
  {"match": {"turn": 0}, "reply": {"text": "done"}}]}`
	// Sends the lead back unless it is already back because of this hook.
	hook := `in=$(cat); echo run >> "$CLAUDE_PROJECT_DIR/stops"
case "$in" in *'"stop_hook_active":true'*) exit 0;; esac
echo '{"decision":"block","reason":"run the tests first"}'`
	dir := hookProject(t, hooksJSON("Stop", "", "$HOOKS/stop.sh", 10), map[string]string{"stop.sh": hook})
	out, errOut, err := hookRun(t, dir, script, "work")
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s\n%s", err, out, errOut)
	}
	if !strings.Contains(out, `"result":"tests pass now"`) {
		t.Errorf("output %s; want the lead's second answer as the result", out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "stops")); strings.Count(string(b), "run") != 2 {
		t.Errorf("the Stop hook ran %d times; want 2", strings.Count(string(b), "run"))
	}
}

func TestHooksFailuresDoNotStopTheRun(t *testing.T) {
	tests := []struct {
		name, hook, timeout, want string
	}{
		{name: "a hanging hook times out", hook: `sleep 30`, timeout: "0.5", want: "timed out after 500ms"},
		{name: "malformed JSON names the hook", hook: `cat >/dev/null; echo '{"decision":'`, timeout: "10", want: `PreToolUse hook "`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			settings := strings.Replace(hooksJSON("PreToolUse", "*", "$HOOKS/h.sh", 1), `"timeout":1`, `"timeout":`+tt.timeout, 1)
			dir := hookProject(t, settings, map[string]string{"h.sh": tt.hook})
			start := time.Now()
			out, errOut, err := hookRun(t, dir, rmScript, "clean")
			if err != nil {
				t.Fatalf("troupe -p: %v\n%s", err, out)
			}
			if el := time.Since(start); el > 8*time.Second {
				t.Errorf("run took %s", el)
			}
			if exists(filepath.Join(dir, "build")) {
				t.Errorf("the call did not run after a non-blocking hook failure")
			}
			if !strings.Contains(errOut, "troupe: hook warning: ") || !strings.Contains(errOut, tt.want) || !strings.Contains(errOut, "h.sh") {
				t.Errorf("stderr %q; want a hook warning naming h.sh and %q", errOut, tt.want)
			}
		})
	}
}

func TestHooksSettingsWrittenDuringRun(t *testing.T) {
	// The first Bash call's hook installs a blocking hook; the second call
	// must still run, and the change is reported.
	const script = `{"model": "scripted", "turns": [
  {"match": {"turn": 0}, "reply": {"tool_calls": [{"id": "toolu_1", "name": "Bash", "input": {"command": "touch one"}}]}},
  {"match": {"turn": 1}, "reply": {"tool_calls": [{"id": "toolu_2", "name": "Bash", "input": {"command": "touch two"}}]}},
  {"match": {"turn": 2}, "reply": {"text": "done"}}]}`
	install := `cat >/dev/null; f="$CLAUDE_PROJECT_DIR/.claude/settings.local.json"
[ -f "$f" ] || echo '{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"exit 2"}]}]}}' > "$f"`
	dir := hookProject(t, hooksJSON("PreToolUse", "Bash", "$HOOKS/install.sh", 10), map[string]string{"install.sh": install})
	out, errOut, err := hookRun(t, dir, script, "go")
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out)
	}
	if !exists(filepath.Join(dir, "one")) || !exists(filepath.Join(dir, "two")) {
		t.Errorf("one, two made = %v, %v; want both: a hook written during the run must not be used", exists(filepath.Join(dir, "one")), exists(filepath.Join(dir, "two")))
	}
	if !strings.Contains(errOut, "changed during this run") {
		t.Errorf("stderr %q; want the change reported", errOut)
	}
}

func TestHooksAudit(t *testing.T) {
	dir := hookProject(t, hooksJSON("PreToolUse", "Bash", "$HOOKS/pre.sh", 10), map[string]string{"pre.sh": `echo "no" >&2; exit 2`})
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	if _, errOut, err := hookRun(t, dir, rmScript, "--audit", auditFile, "clean"); err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, errOut)
	}
	b, err := os.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		if e["kind"] == "hook" {
			found = true
			if e["event"] != "PreToolUse" || e["exit"] != 2.0 || e["decision"] != "block" || e["reason"] != "no" || e["agent"] != "lead" ||
				!strings.HasSuffix(e["command"].(string), "pre.sh") {
				t.Errorf("audit hook entry %v; want PreToolUse, exit 2, block, reason no, agent lead, the command", e)
			}
			if _, ok := e["duration_ms"]; !ok {
				t.Errorf("audit hook entry %v has no duration_ms", e)
			}
		}
	}
	if !found {
		t.Errorf("audit log %s has no hook entry", b)
	}
}

func TestHooksMalformedSettingsStopTheRun(t *testing.T) {
	dir := hookProject(t, `{"hooks":{"PreToolUse":[{"matcher":"(","hooks":[]}]}}`, nil)
	_, _, err := hookRun(t, dir, rmScript, "clean")
	if err == nil || !strings.Contains(err.Error(), filepath.Join(".claude", "settings.json")) || !strings.Contains(err.Error(), "matcher") {
		t.Errorf("troupe -p error = %v; want one naming the file and the matcher", err)
	}
	if !exists(filepath.Join(dir, "build")) {
		t.Error("the run went on")
	}
}

func TestHooksListCommand(t *testing.T) {
	dir := hookProject(t, `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"make check"}]}],
 "PreToolUse":[{"matcher":"Bash|Edit","hooks":[{"type":"command","command":"$HOOKS/guard.sh","timeout":5}]}],
 "Future":[]}}`, nil)
	var out, errOut bytes.Buffer
	home := t.TempDir()
	trustTemp(t, home) // main_test.go
	m := &Main{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" },
		HomeDir: func() (string, error) { return home, nil }, Getwd: func() (string, error) { return dir, nil }}
	if err := m.Run(t.Context(), []string{"--home", home, "hooks", "list"}); err != nil {
		t.Fatalf("troupe hooks list: %v\n%s", err, errOut.String())
	}
	got := out.String()
	pre, stop := strings.Index(got, "PreToolUse  Bash|Edit  5s"), strings.Index(got, "Stop        *          60s      make check")
	if pre < 0 || stop < pre || !strings.Contains(got, filepath.Join(dir, ".claude", "settings.json")) {
		t.Errorf("hooks list:\n%s\nwant PreToolUse (Bash|Edit, 5s) then Stop (*, 60s, make check) with their file", got)
	}
	if !strings.Contains(errOut.String(), "hooks.Future: unknown event") {
		t.Errorf("stderr %q; want the unknown event named", errOut.String())
	}
	out.Reset()
	if err := m.Run(t.Context(), []string{"--home", home, "--json", "hooks", "list"}); err != nil {
		t.Fatal(err)
	}
	var lines []hookscmd.Line
	if err := json.Unmarshal(out.Bytes(), &lines); err != nil || len(lines) != 2 || lines[0].Event != "PreToolUse" || lines[1].Command != "make check" {
		t.Errorf("hooks list --json = %s (%v); want the two hooks in event order", out.String(), err)
	}
	os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte(`{"hooks":{"Stop":[{"matcher":"(","hooks":[]}]}}`), 0o644)
	if err := m.Run(t.Context(), []string{"--home", home, "hooks", "list"}); err == nil || !strings.Contains(err.Error(), "settings.json") {
		t.Errorf("hooks list on a malformed file = %v; want an error naming it", err)
	}
}

func TestHooksSessionStartAndEnd(t *testing.T) {
	const script = `{"model": "scripted", "turns": [
  {"match": {"user": "branch is main"}, "reply": {"text": "knew the branch"}},
  {"match": {"turn": 0}, "reply": {"text": "no context"}}]}`
	settings := `{"hooks":{
 "SessionStart":[{"matcher":"startup","hooks":[{"type":"command","command":"$HOOKS/start.sh"}]}],
 "SessionEnd":[{"hooks":[{"type":"command","command":"$HOOKS/end.sh"}]}]}}`
	dir := hookProject(t, settings, map[string]string{
		"start.sh": `cat >/dev/null; echo "branch is main"`,
		"end.sh":   `cat > "$CLAUDE_PROJECT_DIR/end.json"`,
	})
	out, errOut, err := hookRun(t, dir, script, "hello")
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, `"result":"knew the branch"`) {
		t.Errorf("output %s; want the SessionStart context to reach the model", out)
	}
	var end map[string]any
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "end.json"))), &end); err != nil || end["hook_event_name"] != "SessionEnd" || end["session_id"] != "session-1" {
		t.Errorf("SessionEnd input %v (%v); want the event and the session id", end, err)
	}
}

func TestHooksSubagentStop(t *testing.T) {
	const script = `{"model": "scripted", "turns": [
  {"match": {"system": "sub-agent", "user": "Stop hook feedback"}, "reply": {"text": "SUB-CHECKED"}},
  {"match": {"system": "sub-agent"}, "reply": {"text": "SUB-DONE"}},
  {"match": {"turn": 0}, "reply": {"tool_calls": [{"id": "toolu_agent", "name": "Agent", "input": {"description": "look", "prompt": "look around", "subagent_type": "general-purpose"}}]}},
  {"match": {"tool_result": "Agent"}, "reply": {"text": "lead done"}}]}`
	// Sends the sub-agent back once; the lead's Stop is a separate event.
	hook := `in=$(cat); echo "$in" >> "$CLAUDE_PROJECT_DIR/stops"
case "$in" in *'"stop_hook_active":true'*) exit 0;; esac
echo "check your findings" >&2; exit 2`
	dir := hookProject(t, hooksJSON("SubagentStop", "", "$HOOKS/sub.sh", 10), map[string]string{"sub.sh": hook})
	out, errOut, err := hookRun(t, dir, script, "go")
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, errOut)
	}
	if res, _ := toolResult(t, out, "toolu_agent"); !strings.Contains(res, "SUB-CHECKED") {
		t.Errorf("Agent result %q; want the sub-agent's answer after the SubagentStop hook sent it back", res)
	}
	stops := readFile(t, filepath.Join(dir, "stops"))
	if strings.Count(stops, `"hook_event_name":"SubagentStop"`) != 2 {
		t.Errorf("SubagentStop inputs:\n%s\nwant two", stops)
	}
}

func TestHooksPermissionRequestAndNotification(t *testing.T) {
	tests := []struct {
		name, event, hook string
		removed           bool
		want              string // in the tool result
		notified          bool
	}{
		{name: "allow", event: "PermissionRequest", hook: `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}'`, removed: true},
		{name: "deny with a message", event: "PermissionRequest", hook: `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"ask the release manager"}}}'`,
			want: "ask the release manager"},
		{name: "exit 2 denies", event: "PermissionRequest", hook: `echo "not on Fridays" >&2; exit 2`, want: "not on Fridays"},
		{name: "undecided asks as before", event: "PermissionRequest", hook: `cat >/dev/null; exit 0`, want: "needs approval"},
		{name: "notification", event: "Notification", hook: `cat > "$CLAUDE_PROJECT_DIR/note.json"`, want: "needs approval", notified: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			settings := strings.Replace(hooksJSON(tt.event, "", "$HOOKS/p.sh", 10), `"defaultMode":"bypassPermissions"`, `"defaultMode":"default"`, 1)
			dir := hookProject(t, settings, map[string]string{"p.sh": tt.hook})
			out, errOut, err := hookRun(t, dir, rmScript, "clean")
			if err != nil {
				t.Fatalf("troupe -p: %v\n%s", err, errOut)
			}
			res, _ := toolResult(t, out, "toolu_rm")
			if removed := !exists(filepath.Join(dir, "build")); removed != tt.removed {
				t.Errorf("build removed = %v; want %v (result %q)", removed, tt.removed, res)
			}
			if tt.want != "" && !strings.Contains(res, tt.want) {
				t.Errorf("tool result %q; want %q", res, tt.want)
			}
			if tt.notified {
				var n map[string]any
				if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "note.json"))), &n); err != nil || n["notification_type"] != "permission_prompt" ||
					!strings.Contains(fmt.Sprint(n["message"]), "Bash") {
					t.Errorf("Notification input %v (%v); want a permission_prompt about Bash", n, err)
				}
			}
		})
	}
}

// /hooks: hooks written during a session are not used until reviewed,
// then they are.
func TestHooksReview(t *testing.T) {
	dir := hookProject(t, hooksJSON("Stop", "", "$HOOKS/a.sh", 10), map[string]string{"a.sh": "exit 0"})
	home := t.TempDir()
	a := newApp(Main{Stderr: &bytes.Buffer{}})
	a.HomeFlag = home
	trustTemp(t, a.HomeFlag) // main_test.go
	var warns bytes.Buffer
	hs, err := a.openHooks(dir, "s", nil, &warns)
	if err != nil {
		t.Fatal(err)
	}
	note, err := hs.Review()
	if err != nil || !strings.Contains(note, "unchanged") || !strings.Contains(note, "a.sh") {
		t.Errorf("review() = %q, %v; want the unchanged list", note, err)
	}
	local := filepath.Join(dir, ".claude", "settings.local.json")
	os.WriteFile(local, []byte(`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"exit 2"}]}]}}`), 0o644)
	if hs.Active(hooks.PreToolUse) {
		t.Fatal("a hook written during the session is in force before review")
	}
	note, err = hs.Review()
	if err != nil || !strings.Contains(note, "now in force") || !strings.Contains(note, "PreToolUse [Bash] exit 2") {
		t.Errorf("review() = %q, %v; want the new hooks", note, err)
	}
	if !hs.Active(hooks.PreToolUse) {
		t.Error("the reviewed hook is not in force")
	}
	os.WriteFile(local, []byte(`{"hooks":{"PreToolUse":7}}`), 0o644)
	if _, err := hs.Review(); err == nil || !strings.Contains(err.Error(), "not used") {
		t.Errorf("review() of a malformed file = %v; want an error saying it is not used", err)
	}
	if !hs.Active(hooks.PreToolUse) {
		t.Error("a malformed file dropped the hooks in force")
	}
}

// A call a PreToolUse hook blocked shows on the team's timeline with the
// hook's reason.
func TestHooksBlockedCallOnTimeline(t *testing.T) {
	var got []swarm.Event
	tl := kit.ToolTimeline("ann", time.Now, func(e swarm.Event) { got = append(got, e) })
	call := llm.ToolUse("t1", "Bash", json.RawMessage(`{"command":"rm -rf build"}`))
	blocked := llm.ToolResult("t1", agent.HookBlocked+"rm is not allowed here\nuse git clean", true)
	other := llm.ToolResult("t1", "exit status 1", true)
	tl(agent.Event{Type: agent.EventToolResult, Call: &call, ToolResult: &other})
	tl(agent.Event{Type: agent.EventToolResult, Call: &call, ToolResult: &blocked})
	if len(got) != 1 || got[0].Kind != swarm.EventHook || got[0].Text != "Bash blocked by a hook: rm is not allowed here" || got[0].Agent != "ann" {
		t.Errorf("timeline %+v; want one hook event with the reason's first line", got)
	}
}
