package hooks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// script writes an executable shell script into dir and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// runner returns a Runner over settings JSON whose hooks are in dir.
func runner(t *testing.T, dir, settings string) (*Runner, *[]Run) {
	t.Helper()
	f := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(f, []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load([]string{f})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var runs []Run
	return &Runner{Config: c, Dir: dir, Record: func(r Run) { mu.Lock(); runs = append(runs, r); mu.Unlock() }}, &runs
}

func settingsFor(event, matcher string, cmds ...string) string {
	var hs []string
	for _, c := range cmds {
		b, _ := json.Marshal(c)
		hs = append(hs, fmt.Sprintf(`{"type":"command","command":%s,"timeout":2}`, b))
	}
	return fmt.Sprintf(`{"hooks":{%q:[{"matcher":%q,"hooks":[%s]}]}}`, event, matcher, strings.Join(hs, ","))
}

func TestRunExitCodes(t *testing.T) {
	dir := t.TempDir()
	block := script(t, dir, "block.sh", `echo "no rm here" >&2; exit 2`)
	warn := script(t, dir, "warn.sh", `echo boom >&2; exit 1`)
	deny := script(t, dir, "deny.sh", `cat <<'J'
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"policy says no"}}
J`)
	rewrite := script(t, dir, "rewrite.sh", `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"ls -la"}}}'`)
	bad := script(t, dir, "bad.sh", `echo '{"decision": '`)
	tests := []struct {
		name   string
		cmd    string
		check  func(Outcome) string
		record string // the Run's decision
	}{
		{"exit 2 blocks with stderr", block, func(o Outcome) string {
			if !o.Block || o.Reason != "no rm here" {
				return fmt.Sprintf("Block %v Reason %q; want true, %q", o.Block, o.Reason, "no rm here")
			}
			return ""
		}, "block"},
		{"exit 1 warns", warn, func(o Outcome) string {
			if o.Block || len(o.Warnings) != 1 || !strings.Contains(o.Warnings[0], "exit status 1: boom") || !strings.Contains(o.Warnings[0], "warn.sh") {
				return fmt.Sprintf("Block %v Warnings %q; want no block and a warning naming warn.sh", o.Block, o.Warnings)
			}
			return ""
		}, "warning"},
		{"JSON deny", deny, func(o Outcome) string {
			if !o.Block || o.Permission != "deny" || o.Reason != "policy says no" {
				return fmt.Sprintf("%+v; want a deny with its reason", o)
			}
			return ""
		}, "deny"},
		{"JSON rewrite", rewrite, func(o Outcome) string {
			if o.Block || o.Permission != "allow" || string(o.UpdatedInput) != `{"command":"ls -la"}` {
				return fmt.Sprintf("%+v; want allow with the new input", o)
			}
			return ""
		}, "allow"},
		{"malformed JSON warns naming the hook", bad, func(o Outcome) string {
			if o.Block || len(o.Warnings) != 1 || !strings.Contains(o.Warnings[0], "bad.sh") || !strings.Contains(o.Warnings[0], "not valid hook JSON") {
				return fmt.Sprintf("%+v; want one warning naming bad.sh", o)
			}
			return ""
		}, "warning"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, runs := runner(t, dir, settingsFor("PreToolUse", "Bash", tt.cmd))
			o := r.Run(t.Context(), Input{HookEventName: PreToolUse, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"rm -rf x"}`)})
			if msg := tt.check(o); msg != "" {
				t.Error(msg)
			}
			if len(*runs) != 1 || (*runs)[0].Decision != tt.record || (*runs)[0].Command != tt.cmd {
				t.Errorf("records = %+v; want one with decision %q", *runs, tt.record)
			}
			if o2 := r.Run(t.Context(), Input{HookEventName: PreToolUse, ToolName: "Read"}); len(o2.Runs) != 0 {
				t.Errorf("a Read call ran the Bash hook: %+v", o2)
			}
		})
	}
}

func TestRunInputAndEnv(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "seen")
	s := script(t, dir, "seen.sh", `cat > "`+out+`"; echo >> "`+out+`"; echo "$CLAUDE_PROJECT_DIR $TROUPE_PROJECT_DIR $(pwd)" >> "`+out+`"; echo "remember the tests"`)
	r, _ := runner(t, dir, settingsFor("UserPromptSubmit", "", s))
	o := r.Run(t.Context(), Input{SessionID: "s1", Cwd: dir, HookEventName: UserPromptSubmit, Prompt: "hello"})
	if o.Context != "remember the tests" || o.Block {
		t.Errorf("Run() = %+v; want the stdout as context", o)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(b), "\n", 2)
	var in map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &in); err != nil {
		t.Fatalf("stdin %q: %v", lines[0], err)
	}
	if in["hook_event_name"] != "UserPromptSubmit" || in["prompt"] != "hello" || in["session_id"] != "s1" {
		t.Errorf("stdin = %v; want the event, prompt and session", in)
	}
	if want := dir + " " + dir + " " + dir; strings.TrimSpace(lines[1]) != want {
		t.Errorf("env and folder = %q; want %q", lines[1], want)
	}
}

func TestRunTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// The hook's child sleeps too: the whole group must die.
	hang := script(t, dir, "hang.sh", `sleep 30 & echo $! > "`+pidFile+`"; wait`)
	settings := strings.Replace(settingsFor("Stop", "", hang), `"timeout":2`, `"timeout":0.3`, 1)
	r, _ := runner(t, dir, settings)
	start := time.Now()
	o := r.Run(t.Context(), Input{HookEventName: Stop})
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("Run() took %s; want the 0.3 s timeout to end it", el)
	}
	if o.Block || len(o.Warnings) != 1 || !strings.Contains(o.Warnings[0], "timed out") {
		t.Errorf("Run() = %+v; want a non-blocking timeout warning", o)
	}
	b, _ := os.ReadFile(pidFile)
	var pid int
	fmt.Sscan(string(b), &pid)
	if pid > 0 {
		deadline := time.Now().Add(2 * time.Second)
		for processAlive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if processAlive(pid) {
			t.Errorf("the hook's child %d outlived the timeout", pid)
		}
	}
}

func TestRunParallelAndDeduplicated(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	slow := script(t, dir, "slow.sh", `echo x >> "`+count+`"; sleep 0.4`)
	slow2 := script(t, dir, "slow2.sh", `sleep 0.4`)
	f := filepath.Join(dir, "s.json")
	os.WriteFile(f, []byte(settingsFor("PostToolUse", "Edit", slow, slow)), 0o600)
	f2 := filepath.Join(dir, "s2.json")
	os.WriteFile(f2, []byte(settingsFor("PostToolUse", "*", slow2)), 0o600)
	c, err := Load([]string{f, f2})
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Config: c, Dir: dir}
	start := time.Now()
	o := r.Run(t.Context(), Input{HookEventName: PostToolUse, ToolName: "Edit"})
	if el := time.Since(start); el > 750*time.Millisecond {
		t.Errorf("two 0.4 s hooks took %s; want them in parallel", el)
	}
	b, _ := os.ReadFile(count)
	if len(o.Runs) != 2 || string(b) != "x\n" {
		t.Errorf("runs = %d, the duplicated command ran %d times; want 2 runs, once", len(o.Runs), strings.Count(string(b), "x"))
	}
}

func TestRunJSONFields(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, event, out string
		want             Outcome
	}{
		{"stop blocked", "Stop", `{"decision":"block","reason":"tests fail"}`, Outcome{Block: true, Reason: "tests fail"}},
		{"continue false", "PostToolUse", `{"continue":false,"stopReason":"enough"}`, Outcome{Halt: true, HaltReason: "enough"}},
		{"context", "PostToolUse", `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"formatted"}}`, Outcome{Context: "formatted"}},
		{"plain stdout is not context for PostToolUse", "PostToolUse", `hello`, Outcome{}},
		{"ask", "PreToolUse", `{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"check"}}`, Outcome{Permission: "ask", Reason: "check"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := script(t, dir, "j.sh", "cat >/dev/null; cat <<'J'\n"+tt.out+"\nJ\n")
			r, _ := runner(t, dir, settingsFor(tt.event, "", s))
			o := r.Run(t.Context(), Input{HookEventName: Event(tt.event), ToolName: "Edit"})
			o.Runs = nil
			if o.Block != tt.want.Block || o.Reason != tt.want.Reason || o.Halt != tt.want.Halt || o.HaltReason != tt.want.HaltReason ||
				o.Context != tt.want.Context || o.Permission != tt.want.Permission || len(o.Warnings) != 0 {
				t.Errorf("Run() = %+v; want %+v", o, tt.want)
			}
		})
	}
}

func TestRunNoHooks(t *testing.T) {
	var r *Runner
	if r.Active(PreToolUse) || len(r.Run(t.Context(), Input{HookEventName: PreToolUse}).Runs) != 0 {
		t.Error("a nil Runner ran something")
	}
	r = &Runner{}
	if r.Active(Stop) || len(r.Run(t.Context(), Input{HookEventName: Stop}).Runs) != 0 {
		t.Error("a Runner without config ran something")
	}
}

// BenchmarkRunNoMatch is the cost of an event when hooks are configured
// but none matches it (the tool call pays only this).
func BenchmarkRunNoMatch(b *testing.B) {
	dir := b.TempDir()
	f := filepath.Join(dir, "s.json")
	os.WriteFile(f, []byte(settingsFor("PreToolUse", "Edit|Write", "true")), 0o600)
	c, err := Load([]string{f})
	if err != nil {
		b.Fatal(err)
	}
	r := &Runner{Config: c, Dir: dir}
	in := Input{HookEventName: PreToolUse, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"ls"}`)}
	b.ReportAllocs()
	for b.Loop() {
		if o := r.Run(b.Context(), in); len(o.Runs) != 0 {
			b.Fatal("a hook ran")
		}
	}
}

// BenchmarkRunOneHook is the cost of one matching command hook (a shell
// running a script that reads its input and exits 0): what one PreToolUse
// hook adds to a tool call.
func BenchmarkRunOneHook(b *testing.B) {
	dir := b.TempDir()
	s := filepath.Join(dir, "h.sh")
	os.WriteFile(s, []byte("#!/bin/sh\ncat >/dev/null\nexit 0\n"), 0o755)
	f := filepath.Join(dir, "s.json")
	os.WriteFile(f, []byte(settingsFor("PreToolUse", "Bash", s)), 0o600)
	c, err := Load([]string{f})
	if err != nil {
		b.Fatal(err)
	}
	r := &Runner{Config: c, Dir: dir}
	in := Input{HookEventName: PreToolUse, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"ls"}`)}
	b.ReportAllocs()
	for b.Loop() {
		if o := r.Run(b.Context(), in); len(o.Runs) != 1 || len(o.Warnings) != 0 {
			b.Fatalf("Run() = %+v", o)
		}
	}
}

func TestRunPermissionRequest(t *testing.T) {
	dir := t.TempDir()
	s := script(t, dir, "p.sh", `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"ls"}}}}'`)
	r, runs := runner(t, dir, settingsFor("PermissionRequest", "Bash", s))
	o := r.Run(t.Context(), Input{HookEventName: PermissionRequest, ToolName: "Bash"})
	if o.Block || o.Permission != "allow" || string(o.UpdatedInput) != `{"command":"ls"}` || (*runs)[0].Decision != "allow" {
		t.Errorf("Run() = %+v; want allow with the new input", o)
	}
	bad := script(t, dir, "bad.sh", `cat >/dev/null; echo '{"hookSpecificOutput":{"decision":{"behavior":"maybe"}}}'`)
	r, _ = runner(t, dir, settingsFor("PermissionRequest", "Bash", bad))
	if o := r.Run(t.Context(), Input{HookEventName: PermissionRequest, ToolName: "Bash"}); o.Permission != "" || len(o.Warnings) != 1 || !strings.Contains(o.Warnings[0], "decision.behavior") {
		t.Errorf("Run() = %+v; want a warning about the behavior", o)
	}
}

func TestRunExit2OnEventsThatCannotBlock(t *testing.T) {
	dir := t.TempDir()
	s := script(t, dir, "end.sh", `echo "could not archive the session" >&2; exit 2`)
	r, _ := runner(t, dir, settingsFor("SessionEnd", "", s))
	o := r.Run(t.Context(), Input{HookEventName: SessionEnd, Reason: "other"})
	if o.Block || len(o.Warnings) != 1 || !strings.Contains(o.Warnings[0], "could not archive the session") {
		t.Errorf("Run() = %+v; want no block and the stderr as a warning for the person", o)
	}
}
