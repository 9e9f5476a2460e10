package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"runtime"
	"testing"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// loopModel is a zero-latency model: it calls the Nop tool until it has
// made n calls, then ends the turn. It measures the loop's own overhead.
type loopModel struct{ n int }

func (m *loopModel) Info() llm.Info { return llm.Info{Provider: "bench", Model: "loop"} }

func (m *loopModel) Stream(_ context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		calls := 0
		for _, msg := range req.Messages {
			if msg.Role == llm.RoleAssistant {
				calls++
			}
		}
		msg := llm.Message{Role: llm.RoleAssistant}
		stop := llm.StopEndTurn
		if calls < m.n {
			msg.Content = []llm.Block{llm.ToolUse(fmt.Sprintf("t%d", calls), "Nop", json.RawMessage(`{"path":"x"}`))}
			stop = llm.StopToolUse
		} else {
			msg.Content = []llm.Block{llm.Text("done")}
		}
		yield(llm.Event{Type: llm.EventDone, Response: &llm.Response{Message: msg, StopReason: stop, Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}}}, nil)
	}
}

type nopTool struct{}

func (nopTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "Nop", InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (nopTool) ReadOnly(json.RawMessage) bool { return true }
func (nopTool) Run(context.Context, tool.Call) (tool.Result, error) {
	return tool.Result{Content: "ok"}, nil
}

// BenchmarkToolRound measures the loop's overhead per tool round with a
// zero-latency model and a no-op tool (target: at most 200 µs a round).
// The conversation grows with the rounds, as in a real turn; each run
// starts a fresh agent every 50 rounds so that the per-round cost is that
// of a realistic conversation size.
func BenchmarkToolRound(b *testing.B) {
	const rounds = 50
	reg, _ := tool.NewRegistry(nopTool{})
	b.ReportAllocs()
	b.ResetTimer()
	done := 0
	for done < b.N {
		n := min(rounds, b.N-done)
		a, err := New(Config{Model: &loopModel{n: n}, Tools: reg, CompactAt: -1})
		if err != nil {
			b.Fatal(err)
		}
		res, err := a.Run(context.Background(), "go")
		if err != nil || res.ToolUses != n {
			b.Fatalf("Run = %+v, %v; want %d tool uses", res, err, n)
		}
		done += n
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/round")
}

// BenchmarkIdleAgentMemory measures the heap held by one idle agent after a
// 50-turn conversation.
func BenchmarkIdleAgentMemory(b *testing.B) {
	reg, _ := tool.NewRegistry(nopTool{})
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		a, _ := New(Config{Model: &loopModel{n: 50}, Tools: reg, CompactAt: -1})
		if _, err := a.Run(context.Background(), "go"); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1024, "KiB/agent")
		runtime.KeepAlive(a)
	}
}

// nopHooks is configured hooks of which none matches: what a tool call
// pays when the user has hooks for other tools or events.
type nopHooks struct{}

func (nopHooks) Hook(context.Context, HookEvent) HookResult { return HookResult{} }

// BenchmarkToolRoundHooks is BenchmarkToolRound with Hooks set (none
// matching): compare with BenchmarkToolRound for the cost of the hook
// points themselves.
func BenchmarkToolRoundHooks(b *testing.B) {
	const rounds = 50
	reg, _ := tool.NewRegistry(nopTool{})
	b.ReportAllocs()
	b.ResetTimer()
	done := 0
	for done < b.N {
		n := min(rounds, b.N-done)
		a, err := New(Config{Model: &loopModel{n: n}, Tools: reg, CompactAt: -1, Hooks: nopHooks{}})
		if err != nil {
			b.Fatal(err)
		}
		res, err := a.Run(context.Background(), "go")
		if err != nil || res.ToolUses != n {
			b.Fatalf("Run = %+v, %v; want %d tool uses", res, err, n)
		}
		done += n
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/round")
}
