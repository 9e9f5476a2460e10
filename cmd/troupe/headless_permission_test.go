package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// rmScript is a scripted model that runs `rm -rf build` and then stops.
const rmScript = `{"model": "scripted-perm", "turns": [
  {"match": {"turn": 0}, "reply": {"text": "Cleaning.", "tool_calls": [{"id": "toolu_rm", "name": "Bash", "input": {"command": "rm -rf build"}}]}},
  {"match": {"tool_result": "Bash"}, "reply": {"text": "Finished."}}]}`

// permProject makes a working folder with a build folder in it and the
// rm script, and returns the folder and the script's path.
func permProject(t *testing.T, settings string) (dir, script string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "build", "out.o"), []byte("obj"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("alpha\n"), 0o644)
	if settings != "" {
		os.MkdirAll(filepath.Join(dir, ".troupe"), 0o755)
		if err := os.WriteFile(filepath.Join(dir, ".troupe", "settings.json"), []byte(settings), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script = filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(rmScript), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, script
}

// toolResult returns the text of the tool_result for id in stream-json
// output, and whether it is there.
func toolResult(t *testing.T, out, id string) (string, bool) {
	t.Helper()
	for _, l := range streamLines(t, out) {
		if l["type"] != "user" {
			continue
		}
		msg, _ := l["message"].(map[string]any)
		blocks, _ := msg["content"].([]any)
		for _, b := range blocks {
			m, _ := b.(map[string]any)
			if m["type"] == "tool_result" && m["tool_use_id"] == id {
				s, _ := m["text"].(string)
				return s, true
			}
		}
	}
	return "", false
}

// writeHook writes a shell script for --permission-prompt-command and
// returns the command that runs it.
func writeHook(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hook.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return "sh " + p
}

func TestHeadlessPermissionsRmBuild(t *testing.T) {
	stdinCopy := filepath.Join(t.TempDir(), "request.json")
	const denyRule = `{"permissions": {"deny": ["Bash(rm:*)"]}}`
	tests := []struct {
		name     string
		settings string
		args     []string
		removed  bool     // build was removed
		want     []string // in the tool result
	}{
		{name: "default mode denies and says how to allow",
			want: []string{"Permission to use Bash was denied", `"rm -rf build" needs approval`, `--allowedTools "Bash(rm -rf build)"`, "--permission-mode bypassPermissions", "--permission-prompt-command"}},
		{name: "allowedTools allows", args: []string{"--allowedTools", "Bash(rm -rf build)"}, removed: true},
		{name: "allowedTools with several rules", args: []string{"--allowedTools", "Read, Bash(rm -rf build) Edit"}, removed: true},
		{name: "bypassPermissions allows", args: []string{"--permission-mode", "bypassPermissions"}, removed: true},
		{name: "dangerously-skip-permissions is bypassPermissions for the lead", args: []string{"--dangerously-skip-permissions"}, removed: true},
		{name: "dangerously-skip-permissions with --permission-mode bypassPermissions", args: []string{"--dangerously-skip-permissions", "--permission-mode", "bypassPermissions"}, removed: true},
		{name: "settings defaultMode", settings: `{"permissions": {"defaultMode": "bypassPermissions"}}`, removed: true},
		{name: "flag mode overrides defaultMode", settings: `{"permissions": {"defaultMode": "bypassPermissions"}}`, args: []string{"--permission-mode", "default"},
			want: []string{"needs approval"}},
		{name: "deny rule in settings wins over bypass", settings: denyRule, args: []string{"--permission-mode", "bypassPermissions", "--allowedTools", "Bash(rm -rf build)"},
			want: []string{"denied by rule Bash(rm:*)", "(rule Bash(rm:*) from $CWD/.troupe/settings.json)"}},
		{name: "disallowedTools", args: []string{"--permission-mode", "bypassPermissions", "--disallowedTools", "Bash(rm:*)"},
			want: []string{"(rule Bash(rm:*) from cliArg)"}},
		{name: "dontAsk denies what would ask", args: []string{"--permission-mode", "dontAsk", "--permission-prompt-command", "echo '{\"behavior\":\"allow\"}'"},
			want: []string{"dontAsk mode"}},
		{name: "prompt command allows", args: []string{"--permission-prompt-command", writeHook(t, "cat > "+stdinCopy+"\necho '{\"behavior\":\"allow\"}'")}, removed: true},
		{name: "prompt command denies with a message", args: []string{"--permission-prompt-command", writeHook(t, `cat >/dev/null; echo '{"behavior":"deny","message":"builds are precious"}'`)},
			want: []string{"Permission to use Bash was denied: builds are precious"}},
		{name: "prompt command times out", args: []string{"--permission-prompt-timeout", "1s", "--permission-prompt-command", writeHook(t, `sleep 5; echo '{"behavior":"allow"}'`)},
			want: []string{"timed out after 1s"}},
		{name: "prompt command crashes", args: []string{"--permission-prompt-command", writeHook(t, "echo oops >&2; exit 3")},
			want: []string{"failed: exit status 3: oops"}},
		{name: "prompt command prints garbage", args: []string{"--permission-prompt-command", writeHook(t, "echo yes please")},
			want: []string{"printed no valid answer", "yes please"}},
		{name: "prompt command unknown behavior", args: []string{"--permission-prompt-command", writeHook(t, `echo '{"behavior":"maybe"}'`)},
			want: []string{`answered behavior "maybe"`}},
		{name: "prompt command rewrites the input", args: []string{"--permission-prompt-command", writeHook(t, `echo '{"behavior":"allow","updated_input":{"command":"touch replaced"}}'`)},
			want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, script := permProject(t, tt.settings)
			args := append([]string{"-p", "--trust", "--script", script, "--output-format", "stream-json"}, tt.args...)
			start := time.Now()
			out, err := headlessRun(t, dir, nil, "", append(args, "clean the build")...)
			if err != nil {
				t.Fatalf("troupe -p: %v\n%s", err, out)
			}
			if d := time.Since(start); d > 8*time.Second {
				t.Errorf("run took %s", d)
			}
			res, ok := toolResult(t, out, "toolu_rm")
			if !ok {
				t.Fatalf("no tool result for the rm call in:\n%s", out)
			}
			res = strings.ReplaceAll(res, dir, "$CWD")
			t.Logf("tool result: %s", res)
			_, statErr := os.Stat(filepath.Join(dir, "build"))
			if removed := errors.Is(statErr, os.ErrNotExist); removed != tt.removed {
				t.Errorf("build removed = %v; want %v (tool result %q)", removed, tt.removed, res)
			}
			for _, w := range tt.want {
				if !strings.Contains(res, w) {
					t.Errorf("tool result %q does not contain %q", res, w)
				}
			}
			if !tt.removed && len(tt.want) > 0 && strings.Contains(res, "Permission to use") == false {
				t.Errorf("tool result %q is not a denial", res)
			}
			if tt.name == "prompt command rewrites the input" {
				if _, err := os.Stat(filepath.Join(dir, "replaced")); err != nil {
					t.Errorf("the updated input did not run: %v (tool result %q)", err, res)
				}
			}
		})
	}
	// The prompt command got the request on its stdin.
	var req map[string]any
	data, err := os.ReadFile(stdinCopy)
	if err != nil || json.Unmarshal(data, &req) != nil {
		t.Fatalf("prompt command stdin = %q, %v", data, err)
	}
	in, _ := req["input"].(map[string]any)
	if req["tool_name"] != "Bash" || in["command"] != "rm -rf build" || req["tool_use_id"] != "toolu_rm" || req["mode"] != "default" ||
		req["cwd"] == "" || !strings.Contains(req["reason"].(string), "needs approval") {
		t.Errorf("prompt command request = %s", data)
	}
}

func TestHeadlessPermissionAudit(t *testing.T) {
	dir, _ := permProject(t, "")
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(`{"turns": [
	  {"match": {"turn": 0}, "reply": {"text": "Looking.", "tool_calls": [{"id": "toolu_r", "name": "Read", "input": {"file_path": "notes.txt"}}]}},
	  {"match": {"turn": 1}, "reply": {"text": "Cleaning.", "tool_calls": [{"id": "toolu_rm", "name": "Bash", "input": {"command": "rm -rf build"}}]}},
	  {"match": {"tool_result": "Bash"}, "reply": {"text": "Finished."}}]}`), 0o644)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	out, err := headlessRun(t, dir, nil, "", "-p", "--trust", "--script", script, "--audit", log, "go")
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("audit has %d lines; want 2 (one per decision):\n%s", len(lines), data)
	}
	var got []string
	for _, l := range lines {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		if e["agent"] == nil || e["time"] != "2026-12-02T12:00:00Z" || e["reason"] == "" || e["mode"] != "default" {
			t.Errorf("audit line = %s", l)
		}
		got = append(got, e["tool"].(string)+" "+e["input"].(string)+" "+e["decision"].(string))
	}
	want := []string{"Read notes.txt allow", "Bash rm -rf build deny"}
	if !slices.Equal(got, want) {
		t.Errorf("audit = %q; want %q", got, want)
	}
}

func TestHeadlessPermissionErrors(t *testing.T) {
	tests := []struct {
		name     string
		settings string
		args     []string
		want     []string
		usage    bool
	}{
		{name: "malformed settings", settings: "{\n  \"permissions\": {\"allow\": [\"Bash\"],}\n}",
			want: []string{"$CWD/.troupe/settings.json:2:"}},
		{name: "bad rule in settings", settings: `{"permissions": {"deny": ["Bash(rm"]}}`,
			want: []string{"$CWD/.troupe/settings.json", "permissions.deny[0]"}},
		{name: "bad mode in settings", settings: `{"permissions": {"defaultMode": "yolo"}}`,
			want: []string{"$CWD/.troupe/settings.json", "defaultMode"}},
		{name: "bad mode flag", args: []string{"--permission-mode", "yolo"}, want: []string{"--permission-mode", "yolo"}, usage: true},
		{name: "dangerously-skip-permissions with another mode", args: []string{"--dangerously-skip-permissions", "--permission-mode", "default"},
			want: []string{"--dangerously-skip-permissions", "--permission-mode default"}, usage: true},
		{name: "bad allowed rule", args: []string{"--allowedTools", "Bash(rm"}, want: []string{"--allowedTools", "Bash(rm"}, usage: true},
		{name: "missing add-dir", args: []string{"--add-dir", "/nonexistent/dir"}, want: []string{"--add-dir"}, usage: true},
		{name: "bad timeout", args: []string{"--permission-prompt-timeout", "0s"}, want: []string{"--permission-prompt-timeout"}, usage: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, script := permProject(t, tt.settings)
			args := append([]string{"-p", "--trust", "--script", script, "--output-format", "stream-json"}, tt.args...)
			out, err := headlessRun(t, dir, nil, "", append(args, "clean")...)
			if err == nil {
				t.Fatalf("troupe -p succeeded; want an error\n%s", out)
			}
			msg := strings.ReplaceAll(err.Error(), dir, "$CWD")
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			var ue *UsageError
			if errors.As(err, &ue) != tt.usage {
				t.Errorf("usage error = %v; want %v", !tt.usage, tt.usage)
			}
			if out != "" {
				t.Errorf("the agent started (output %q); want the error before any model call", out)
			}
			if _, err := os.Stat(filepath.Join(dir, "build")); err != nil {
				t.Errorf("build is gone: %v", err)
			}
		})
	}
}

func TestHeadlessAddDirAllowsReads(t *testing.T) {
	dir, _ := permProject(t, "")
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "lib.txt"), []byte("shared\n"), 0o644)
	script := filepath.Join(t.TempDir(), "script.json")
	b, _ := json.Marshal(map[string]any{"turns": []any{
		map[string]any{"match": map[string]any{"turn": 0}, "reply": map[string]any{"text": "Reading.", "tool_calls": []any{
			map[string]any{"id": "toolu_r", "name": "Read", "input": map[string]any{"file_path": filepath.Join(other, "lib.txt")}}}}},
		map[string]any{"match": map[string]any{"tool_result": "Read"}, "reply": map[string]any{"text": "Done."}, "repeat": true},
	}})
	os.WriteFile(script, b, 0o644)
	out, err := headlessRun(t, dir, nil, "", "-p", "--trust", "--script", script, "--output-format", "stream-json", "read it")
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := toolResult(t, out, "toolu_r"); !strings.Contains(res, "outside the working directories") || !strings.Contains(res, "--add-dir "+other) {
		t.Errorf("read outside without --add-dir: tool result %q; want a denial suggesting --add-dir", res)
	}
	out, err = headlessRun(t, dir, nil, "", "-p", "--trust", "--script", script, "--output-format", "stream-json", "--add-dir", other, "read it")
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := toolResult(t, out, "toolu_r"); !strings.Contains(res, "shared") {
		t.Errorf("read with --add-dir: tool result %q; want the file", res)
	}
}
