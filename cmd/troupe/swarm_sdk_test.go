package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/llm/llmtest"
)

// A team on a real provider's code path: the lead and its in-process
// teammate both talk to a fake Anthropic Messages API through the official
// SDK (real HTTP, real SSE). The lead creates a team and spawns a teammate;
// the teammate's report reaches the lead in the idle digest.
func TestTeamOnAnthropicSDK(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, func(req *llmtest.AnthropicRequest) llmtest.AnthropicReply {
		var system string
		for _, b := range req.System {
			system += b.Text
		}
		switch {
		case strings.Contains(system, "teammate ann"):
			return llmtest.AnthropicText("ANN-DONE: ", "the answer is 42")
		case len(req.Messages) == 1:
			return llmtest.AnthropicContent(
				llmtest.AnthropicToolUseBlock("toolu_1", "TeamCreate", `{"team_name":"sdk-team"}`),
				llmtest.AnthropicToolUseBlock("toolu_2", "Agent", `{"description":"answer","name":"ann","prompt":"find the answer"}`))
		case bytes.Contains(req.Body, []byte("teammate-idle-digest")) && bytes.Contains(req.Body, []byte("ANN-DONE")):
			return llmtest.AnthropicText("LEAD-SAW-REPORT")
		default:
			return llmtest.AnthropicText("waiting for the team")
		}
	})
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &errOut, Getenv: func(k string) string {
		return map[string]string{"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": srv.URL}[k]
	}}
	err := m.Run(t.Context(), []string{"-p", "--trust", "--agent-teams", "--explicit-teams", "--teammate-mode", "in-process", "--home", dir, "--cwd", dir,
		"--output-format", "json", "form a team"})
	if err != nil {
		t.Fatalf("troupe -p --agent-teams: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	var res struct {
		Result string `json:"result"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Result != "LEAD-SAW-REPORT" {
		t.Errorf("result = %q (%v), want LEAD-SAW-REPORT\nstdout:\n%s\nstderr:\n%s", res.Result, err, out.String(), errOut.String())
	}
	for _, want := range []string{"spawned ann (blue, in-process)", "ann is idle"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("the timeline lacks %q:\n%s", want, errOut.String())
		}
	}
}
