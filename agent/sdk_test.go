package agent

// The loop against the official Anthropic SDK talking to a fake server:
// the same behaviours as with the scripted model, through real HTTP and SSE.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/llm/anthropic"
	"github.com/troupe-dev/troupe/llm/llmtest"
	"github.com/troupe-dev/troupe/tool"
)

func sdkModel(t *testing.T, h llmtest.AnthropicHandler) (*anthropic.Model, *llmtest.AnthropicServer) {
	t.Helper()
	srv := llmtest.NewAnthropicServer(t, h)
	m, err := anthropic.New(anthropic.Options{APIKey: "k", BaseURL: srv.URL, RetryBaseDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return m, srv
}

func TestSDKInterruptTurnThenKill(t *testing.T) {
	slow := llmtest.AnthropicText("never", "seen")
	slow.Delay = time.Minute
	m, srv := sdkModel(t, llmtest.AnthropicScript(slow, llmtest.AnthropicText("second ", "answer"), slow))
	a := newAgent(t, Config{Model: m})
	done := make(chan Result)
	go func() {
		res, err := a.Run(t.Context(), "first")
		if err != nil {
			t.Errorf("interrupted Run = %v; want nil error", err)
		}
		done <- res
	}()
	for srv.RequestCount() < 1 { // the request is at the server
		time.Sleep(time.Millisecond)
	}
	a.Interrupt()
	if res := <-done; !res.Interrupted {
		t.Fatalf("Result = %+v; want Interrupted", res)
	}
	res, err := a.Run(t.Context(), "second")
	if err != nil || res.Text != "second answer" {
		t.Fatalf("Run after interrupt = %+v, %v", res, err)
	}
	errc := make(chan error)
	go func() { _, err := a.Run(t.Context(), "third"); errc <- err }()
	for srv.RequestCount() < 3 {
		time.Sleep(time.Millisecond)
	}
	a.Kill()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrKilled) {
			t.Fatalf("Run after Kill = %v; want ErrKilled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Kill did not stop a run waiting on the server")
	}
}

func TestSDKPendingAndCompaction(t *testing.T) {
	m, srv := sdkModel(t, llmtest.AnthropicScript(
		llmtest.AnthropicToolCall("toolu_1", "Note", `{}`).WithUsage(llmtest.AnthropicUsage{InputTokens: 5000, OutputTokens: 100}),
		llmtest.AnthropicText("noted").WithUsage(llmtest.AnthropicUsage{InputTokens: 5200, OutputTokens: 10}),
		llmtest.AnthropicText("SUMMARY-TEXT"),
		llmtest.AnthropicText("after compaction"),
	))
	var a *Agent
	note := &fakeTool{name: "Note", run: func(context.Context, tool.Call) (tool.Result, error) {
		a.Send("a message that arrived mid-turn")
		return tool.Result{Content: "ok"}, nil
	}}
	a = newAgent(t, Config{Model: m, CompactAt: 1000, KeepRecent: 1}, note)
	if res, err := a.Run(t.Context(), "start"); err != nil || res.Text != "noted" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	reqs := srv.Requests()
	last := reqs[1].LastMessage()
	var sawResult, sawPending bool
	for _, b := range last.Content {
		sawResult = sawResult || b.Type == "tool_result"
		sawPending = sawPending || (b.Type == "text" && strings.Contains(b.Text, "arrived mid-turn"))
	}
	if !sawResult || !sawPending {
		t.Errorf("second request's last message = %+v; want the tool result and the pending message together", last)
	}
	if res, err := a.Run(t.Context(), "continue"); err != nil || res.Text != "after compaction" {
		t.Fatalf("Run after the threshold = %+v, %v", res, err)
	}
	reqs = srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("server saw %d requests; want 4 (one of them the summary)", len(reqs))
	}
	final := reqs[3].Messages
	if len(final) == 0 || !strings.Contains(final[0].Content[0].Text, "SUMMARY-TEXT") {
		t.Errorf("request after compaction starts with %+v; want the summary", final)
	}
}
