package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	iofs "io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// headlessRun runs troupe with args in cwd, with env as the environment, a
// fixed clock and a fixed session id.
func headlessRun(t *testing.T, cwd string, env map[string]string, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	fixed := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	home := t.TempDir() // one for the run: the trust --trust records is read back from it
	m := &Main{
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut,
		Getenv:  func(k string) string { return env[k] },
		HomeDir: func() (string, error) { return home, nil },
		Getwd:   func() (string, error) { return cwd, nil },
		Now:     func() time.Time { return fixed },
		NewID:   func() string { return "session-1" },
		Version: "v0.0.0-test",
	}
	err := m.Run(t.Context(), args)
	return out.String(), err
}

// streamLines decodes stream-json output into generic objects.
func streamLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("stream-json line %q: %v", l, err)
		}
		lines = append(lines, v)
	}
	return lines
}

func TestHeadlessScriptedGolden(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("alpha\nbeta\n"), 0o644)
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(`{"model": "scripted-golden", "turns": [
	  {"match": {"turn": 0}, "reply": {"text": "Reading the notes.", "tool_calls": [{"id": "toolu_1", "name": "Read", "input": {"file_path": "notes.txt"}}],
	   "usage": {"input_tokens": 100, "output_tokens": 20}}},
	  {"match": {"tool_result": "Read", "user": "beta"}, "reply": {"text": "The notes say alpha and beta.", "usage": {"input_tokens": 150, "output_tokens": 12, "cache_read_input_tokens": 90}}}]}`), 0o644)
	out, err := headlessRun(t, dir, nil, "", "-p", "--trust", "--provider", "scripted", "--script", script, "--output-format", "stream-json", "summarize", "notes.txt")
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out)
	}
	got := strings.ReplaceAll(out, dir, "$CWD")
	golden := filepath.Join("testdata", "stream-json-scripted.golden")
	if *update {
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("stream-json output mismatch (-want +got):\n%s", diff)
	}
	// The text and json formats carry the same result.
	text, err := headlessRun(t, dir, nil, "", "-p", "--trust", "--script", script, "summarize notes.txt")
	if err != nil || text != "The notes say alpha and beta.\n" {
		t.Errorf("text output = %q, %v", text, err)
	}
	js, err := headlessRun(t, dir, nil, "summarize notes.txt", "-p", "--trust", "--script", script, "--output-format", "json")
	var res map[string]any
	if err != nil || json.Unmarshal([]byte(js), &res) != nil || res["result"] != "The notes say alpha and beta." || res["num_turns"] != 2.0 {
		t.Errorf("json output (prompt on stdin) = %s, %v", js, err)
	}
}

func TestHeadlessAnthropicToolRoundTrip(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(
		llmtest.AnthropicFault{Status: 429, RetryAfter: "0"},
		llmtest.AnthropicToolCall("toolu_w", "Write", `{"file_path": "hello.txt", "content": "hi from claude\n"}`),
		llmtest.AnthropicText("Wrote ", "hello.txt."),
	))
	env := map[string]string{"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": srv.URL}
	out, err := headlessRun(t, dir, env, "", "-p", "--trust", "--permission-mode", "acceptEdits", "--output-format", "stream-json", "create hello.txt")
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || string(b) != "hi from claude\n" {
		t.Errorf("hello.txt = %q, %v; want the model's content", b, err)
	}
	lines := streamLines(t, out)
	var kinds []string
	for _, l := range lines {
		k := l["type"].(string)
		if st, ok := l["subtype"].(string); ok {
			k += "/" + st
		}
		kinds = append(kinds, k)
	}
	if got, want := strings.Join(kinds, " "), "system/init user system/retry assistant user assistant result/success"; got != want {
		t.Errorf("stream-json events = %q; want %q", got, want)
	}
	last := lines[len(lines)-1]
	if last["result"] != "Wrote hello.txt." || last["provider"] != "anthropic" {
		t.Errorf("result line = %v", last)
	}
	if _, ok := last["total_cost_usd"]; !ok {
		t.Errorf("result line has no total_cost_usd: %v", last)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("server saw %d requests; want 3 (one retried)", len(reqs))
	}
	if bp := reqs[2].CacheBreakpoints(); len(bp) == 0 {
		t.Errorf("follow-up request has no cache breakpoints; want the system prompt, tools and conversation cached")
	}
}

func TestHeadlessOpenAIBash(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.NewOpenAIServer(t, llmtest.OpenAIScript(
		llmtest.OpenAIToolCall("call_1", "Bash", `{"command": "echo from-bash; exit 3"}`),
		llmtest.OpenAIText("The command printed from-bash and exited 3."),
	))
	env := map[string]string{"OPENAI_BASE_URL": srv.URL}
	out, err := headlessRun(t, dir, env, "", "-p", "--trust", "--allowedTools", "Bash(exit:*)", "--model", "local-model", "--output-format", "json", "run it")
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out)
	}
	req := srv.Request(1)
	var toolMsg string
	for _, m := range req.Messages {
		if m.Role == "tool" {
			toolMsg = m.Content
		}
	}
	if !strings.Contains(toolMsg, "from-bash") || !strings.Contains(toolMsg, "Exit code: 3") {
		t.Errorf("tool result sent back = %q; want the output and exit code", toolMsg)
	}
	var res map[string]any
	json.Unmarshal([]byte(out), &res)
	if res["provider"] != "openai" || res["model"] != "local-model" || res["tool_uses"] != 1.0 {
		t.Errorf("result = %v", res)
	}
}

func TestHeadlessErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{\n  \"turns\": [\n    {\"reply\": {\"text\": 5}}\n  ]\n}"), 0o644)
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		want  string
		usage bool
	}{
		{"no model", nil, []string{"-p", "--trust", "hi"}, "set ANTHROPIC_API_KEY", false},
		{"unknown provider", nil, []string{"-p", "--trust", "--provider", "gemini", "hi"}, `--provider "gemini"`, true},
		{"bad format", nil, []string{"-p", "--trust", "--output-format", "xml", "hi"}, `--output-format "xml"`, true},
		{"malformed script", nil, []string{"-p", "--trust", "--script", bad, "hi"}, "line 3", false},
		{"missing script", nil, []string{"-p", "--trust", "--provider", "scripted", "hi"}, "needs --script", true},
		{"no prompt", nil, []string{"-p", "--trust", "--script", bad}, "no prompt", true},
		{"openai without model", map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}, []string{"-p", "--trust", "hi"}, "--model", false},
		{"bad cwd", nil, []string{"-p", "--trust", "--script", bad, "--cwd", filepath.Join(dir, "nope"), "hi"}, "not a folder", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := headlessRun(t, dir, tt.env, "", tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("troupe %v error = %v; want it to mention %q", tt.args, err, tt.want)
			}
			var ue *UsageError
			if errors.As(err, &ue) != tt.usage {
				t.Errorf("usage error = %v; want %v", errors.As(err, &ue), tt.usage)
			}
			if tt.name == "no model" && !errors.Is(err, llm.ErrNoCredentials) {
				t.Errorf("error does not match llm.ErrNoCredentials")
			}
		})
	}
}

// A prompt on stdin over the limit is refused, never cut silently.
func TestHeadlessPromptTooLong(t *testing.T) {
	script := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(script, []byte(`{"turns": [{"reply": {"text": "x"}}]}`), 0o644)
	_, err := headlessRun(t, t.TempDir(), nil, strings.Repeat("a", 1<<20+1), "-p", "--trust", "--script", script)
	var ue *UsageError
	if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("troupe -p with an oversized stdin prompt = %v; want a usage error saying it is too long", err)
	}
}

// A headless run that starts no background task leaves nothing in the
// temporary folder; one that does keeps its output file.
func TestHeadlessLeavesNoEmptyOutputDir(t *testing.T) {
	for _, tt := range []struct {
		name, reply string
		keeps       bool
	}{
		{"no task", `{"text":"done"}`, false},
		{"background shell", `{"tool_calls":[{"name":"Bash","input":{"command":"echo kept","run_in_background":true}}]}`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tmp, work := t.TempDir(), t.TempDir()
			script := filepath.Join(work, "script.json")
			writeFile(t, script, `{"turns":[{"match":{"turn":0},"reply":`+tt.reply+`},{"match":{},"reply":{"text":"done"},"repeat":true}]}`)
			c := exec.CommandContext(t.Context(), os.Args[0], "-p", "--trust", "--home", filepath.Join(work, "home"), "--cwd", work,
				"--provider", "scripted", "--script", script, "--permission-mode", "bypassPermissions", "go")
			c.Env = append(os.Environ(), asTroupeEnv+"=1", "TMPDIR="+tmp)
			if out, err := c.CombinedOutput(); err != nil {
				t.Fatalf("troupe -p: %v\n%s", err, out)
			}
			var files []string
			_ = filepath.WalkDir(tmp, func(p string, d iofs.DirEntry, err error) error {
				if err == nil && p != tmp {
					files = append(files, strings.TrimPrefix(p, tmp))
				}
				return nil
			})
			kept := slices.ContainsFunc(files, func(f string) bool { return strings.HasSuffix(f, ".output") })
			switch {
			case tt.keeps && !kept:
				t.Errorf("the background shell's output file is gone: %q", files)
			case !tt.keeps && len(files) > 1: // troupe-<uid> itself may stay
				t.Errorf("the run left %q in the temporary folder", files)
			}
		})
	}
}

// Model errors are worded for a user, and each retry is a progress line
// on stderr in the text format: what failed, where, and when the next try
// is.
func TestHeadlessModelErrorsWorded(t *testing.T) {
	run := func(t *testing.T, h llmtest.AnthropicHandler) (stdout, stderr string, err error) {
		srv := llmtest.NewAnthropicServer(t, h)
		var out, errOut bytes.Buffer
		env := map[string]string{"ANTHROPIC_API_KEY": "bad-key", "ANTHROPIC_BASE_URL": srv.URL}
		m := &Main{Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] }}
		err = m.Run(t.Context(), []string{"-p", "--trust", "--cwd", t.TempDir(), "hi"})
		return out.String(), errOut.String(), err
	}
	t.Run("bad key", func(t *testing.T) {
		_, _, err := run(t, llmtest.AnthropicScript(llmtest.AnthropicFault{Status: 401}))
		if err == nil || !strings.Contains(err.Error(), "refused the API key: check ANTHROPIC_API_KEY") {
			t.Errorf("error = %v; want it to say the key was refused and where it is set", err)
		}
		var api *llm.APIError
		if !errors.As(err, &api) || api.Status != 401 {
			t.Errorf("the provider's error is not kept: %v", err)
		}
	})
	t.Run("retry then answer", func(t *testing.T) {
		stdout, stderr, err := run(t, llmtest.AnthropicScript(llmtest.AnthropicFault{Status: 529}, llmtest.AnthropicText("fine")))
		if err != nil || strings.TrimSpace(stdout) != "fine" {
			t.Fatalf("troupe -p = %q, %v", stdout, err)
		}
		if !strings.Contains(stderr, "is failing or overloaded; retry 1 of 4 in ") {
			t.Errorf("stderr has no retry line:\n%s", stderr)
		}
	})
}
