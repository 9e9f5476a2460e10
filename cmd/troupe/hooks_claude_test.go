package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/claudecodetest"
	"github.com/troupe-dev/troupe/llm/llmtest"
)

// rmHandler scripts a model that answers the main loop's first request
// with Bash `rm -rf build` and records the result it gets back.
func rmHandler(got *string, isErr *bool, mu *sync.Mutex) llmtest.AnthropicHandler {
	called := false
	return func(req *llmtest.AnthropicRequest) llmtest.AnthropicReply {
		last, _ := claudecodetest.LastUser(req)
		mu.Lock()
		defer mu.Unlock()
		for _, b := range last.Content {
			if b.Type == "tool_result" && b.ToolUseID == "toolu_rm" {
				*got, *isErr = b.Text, b.IsError
				return llmtest.AnthropicText("done")
			}
		}
		bash := slices.ContainsFunc(req.Tools, func(tl llmtest.AnthropicTool) bool { return tl.Name == "Bash" })
		if bash && !called {
			called = true
			return llmtest.AnthropicToolCall("toolu_rm", "Bash", `{"command":"rm -rf build","description":"Remove the build folder"}`)
		}
		return llmtest.AnthropicText("ok")
	}
}

// The same settings file gives the same PreToolUse decisions under the
// real Claude Code and under troupe: the call does not run, and the model
// reads the hook's reason in an error result.
func TestHooksSameDecisionsAsClaudeCode(t *testing.T) {
	tests := []struct {
		name, hook, reason string
	}{
		{name: "exit 2", hook: `grep -q 'rm -rf' && { echo "rm is not allowed here; use git clean" >&2; exit 2; }; exit 0`, reason: "rm is not allowed here; use git clean"},
		{name: "JSON deny", hook: `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"builds are precious"}}'`, reason: "builds are precious"},
		{name: "pass", hook: `cat >/dev/null; exit 0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			settings := `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"$HOOKS/pre.sh","timeout":20}]}]}}`
			// Claude Code.
			claudeDir := hookProject(t, settings, map[string]string{"pre.sh": tt.hook})
			var mu sync.Mutex
			var claudeRes string
			var claudeErr bool
			srv := llmtest.NewAnthropicServer(t, rmHandler(&claudeRes, &claudeErr, &mu))
			s := claudecodetest.New(t, srv.URL)
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			r, err := s.Print(ctx, claudeDir, "clean the build", "--allowedTools", "Bash", "--output-format", "json")
			if err != nil {
				t.Fatalf("claude -p: %v", err)
			}
			mu.Lock()
			cres, cerr := claudeRes, claudeErr
			mu.Unlock()
			if cres == "" && !cerr {
				t.Fatalf("claude never sent the rm call's result (exit %d)\nstdout %s\nstderr %s", r.ExitCode, r.Stdout, r.Stderr)
			}
			// troupe, on the same settings.
			troupeDir := hookProject(t, settings, map[string]string{"pre.sh": tt.hook})
			out, errOut, err := hookRun(t, troupeDir, rmScript, "--allowedTools", "Bash", "clean the build")
			if err != nil {
				t.Fatalf("troupe -p: %v\n%s", err, errOut)
			}
			tres, _ := toolResult(t, out, "toolu_rm")
			cRan, tRan := !exists(filepath.Join(claudeDir, "build")), !exists(filepath.Join(troupeDir, "build"))
			t.Logf("claude: ran %v, result %q (error %v); troupe: ran %v, result %q", cRan, cres, cerr, tRan, tres)
			if cRan != tRan || cRan != (tt.reason == "") {
				t.Errorf("rm ran under claude %v, troupe %v; want both %v", cRan, tRan, tt.reason == "")
			}
			if tt.reason != "" && (!strings.Contains(cres, tt.reason) || !strings.Contains(tres, tt.reason) || !cerr) {
				t.Errorf("results: claude %q (error %v), troupe %q; want both to carry %q", cres, cerr, tres, tt.reason)
			}
		})
	}
}
