package llmtest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/claudecodetest"
	"github.com/troupe-dev/troupe/llm/llmtest"
)

// These tests run the real Claude Code CLI (claudecodetest.Version) against
// the fake server; they skip, saying why, when it cannot be installed.

// claudeDeadline bounds one claude run; it is a hang guard, not a timing
// assertion.
const claudeDeadline = 3 * time.Minute

// checkClaudeRequest checks what docs/protocol.md section 14 says the real CLI
// sends on every Messages call, so a change in a newer release shows up here.
func checkClaudeRequest(t *testing.T, i int, q llmtest.AnthropicRequest, key string) {
	t.Helper()
	if q.Method != "POST" || q.Path != "/v1/messages" || q.Query.Get("beta") != "true" {
		t.Errorf("request %d: %s %s?%s; want POST /v1/messages?beta=true", i, q.Method, q.Path, q.Query.Encode())
	}
	if got := q.Header.Get("X-Api-Key"); got != key {
		t.Errorf("request %d: x-api-key %q; want the session's key %q", i, got, key)
	}
	if got := q.Header.Get("Anthropic-Version"); got != "2023-06-01" {
		t.Errorf("request %d: anthropic-version %q; want 2023-06-01", i, got)
	}
	if ua := q.Header.Get("User-Agent"); !strings.HasPrefix(ua, "claude-cli/"+claudecodetest.Version) {
		t.Errorf("request %d: User-Agent %q; want claude-cli/%s", i, ua, claudecodetest.Version)
	}
	if !q.Stream {
		t.Errorf("request %d: not streamed", i)
	}
	if !strings.Contains(q.Header.Get("Anthropic-Beta"), "claude-code-20250219") {
		t.Errorf("request %d: anthropic-beta %q lacks claude-code-20250219", i, q.Header.Get("Anthropic-Beta"))
	}
}

// roles returns the roles of q's messages.
func roles(q llmtest.AnthropicRequest) []string {
	var out []string
	for _, m := range q.Messages {
		out = append(out, m.Role)
	}
	return out
}

func TestRealClaudePrint(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(llmtest.AnthropicText("HELLO-FROM-THE-FAKE-SERVER")))
	s := claudecodetest.New(t, srv.URL)
	ctx, cancel := context.WithTimeout(t.Context(), claudeDeadline)
	defer cancel()
	r, err := s.Print(ctx, t.TempDir(), "say hi")
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 0 || strings.TrimSpace(r.Stdout) != "HELLO-FROM-THE-FAKE-SERVER" {
		t.Fatalf("claude -p exit %d, stdout %q, stderr %q; want 0 and the scripted text", r.ExitCode, r.Stdout, r.Stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d Messages requests; want 1", len(reqs))
	}
	q := reqs[0]
	checkClaudeRequest(t, 0, q, s.APIKey)
	// The prompt is in the first user message, and the environment block
	// comes as a mid-conversation system message (docs/protocol.md section 14).
	if rs := roles(q); len(rs) < 2 || rs[0] != "user" || rs[len(rs)-1] != "system" {
		t.Errorf("message roles %q; want user first and a system message last", rs)
	}
	var prompt bool
	for _, b := range q.Messages[0].Content {
		prompt = prompt || strings.Contains(b.Text, "say hi")
	}
	if !prompt {
		t.Errorf("first user message %+v lacks the prompt", q.Messages[0].Content)
	}
	if u := srv.UnknownPaths(); len(u) != 0 {
		t.Errorf("claude called endpoints the fake does not serve: %q", u)
	}
}

func TestRealClaudeWritesThroughToolUse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "out.txt")
	in, err := json.Marshal(map[string]string{"file_path": target, "content": "WRITTEN-BY-THE-FAKE-MODEL\n"})
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(
		llmtest.AnthropicToolCall("toolu_fake_write", "Write", string(in)),
		llmtest.AnthropicText("DONE-WRITING"),
	))
	s := claudecodetest.New(t, srv.URL)
	ctx, cancel := context.WithTimeout(t.Context(), claudeDeadline)
	defer cancel()
	r, err := s.Print(ctx, dir, "write the file", "--permission-mode", "acceptEdits")
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 0 || strings.TrimSpace(r.Stdout) != "DONE-WRITING" {
		t.Fatalf("claude -p exit %d, stdout %q, stderr %q; want 0 and the final scripted text", r.ExitCode, r.Stdout, r.Stderr)
	}
	got, err := os.ReadFile(target)
	if err != nil || string(got) != "WRITTEN-BY-THE-FAKE-MODEL\n" {
		t.Fatalf("target file = %q, %v; want the scripted content", got, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d Messages requests; want 2 (tool call, then its result)", len(reqs))
	}
	for i, q := range reqs {
		checkClaudeRequest(t, i, q, s.APIKey)
	}
	// The second request carries our tool_use back and its result.
	var sawUse, sawResult bool
	for _, m := range reqs[1].Messages {
		for _, b := range m.Content {
			if b.Type == "tool_use" && b.ID == "toolu_fake_write" && m.Role == "assistant" {
				sawUse = true
			}
			if b.Type == "tool_result" && b.ToolUseID == "toolu_fake_write" && m.Role == "user" && !b.IsError {
				sawResult = true
			}
		}
	}
	if !sawUse || !sawResult {
		t.Errorf("second request roles %q: tool_use echoed %v, successful tool_result %v; want both", roles(reqs[1]), sawUse, sawResult)
	}
	if u := srv.UnknownPaths(); len(u) != 0 {
		t.Errorf("claude called endpoints the fake does not serve: %q", u)
	}
}
