package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/mcp"
	"github.com/troupe-dev/troupe/tool"
)

// nativeEcho is the native counterpart of the test server's echo tool:
// it decodes the same input and returns the same text.
type nativeEcho struct{}

func (nativeEcho) Spec() llm.ToolSpec { return llm.ToolSpec{Name: "Echo"} }

func (nativeEcho) ReadOnly(json.RawMessage) bool { return true }

func (nativeEcho) Run(_ context.Context, c tool.Call) (tool.Result, error) {
	var in struct {
		Text string `json:"text"`
	}
	if res, ok := tool.Decode("Echo", c.Input, &in); !ok {
		return res, nil
	}
	return tool.Result{Content: "echo: " + in.Text}, nil
}

func benchCall(b *testing.B, t tool.Tool) {
	call := tool.Call{ID: "1", Name: t.Spec().Name, Input: json.RawMessage(`{"text":"hello"}`)}
	for b.Loop() {
		res, err := t.Run(b.Context(), call)
		if err != nil || res.Content != "echo: hello" {
			b.Fatalf("Run = %+v, %v", res, err)
		}
	}
}

// BenchmarkCall compares one call of a native tool with one call of the
// same tool on an MCP server over stdio and over streamable HTTP: the
// difference is the per-call overhead of MCP.
func BenchmarkCall(b *testing.B) {
	b.Run("native", func(b *testing.B) { benchCall(b, nativeEcho{}) })
	streamable, _ := httpServers(b)
	for _, s := range []mcp.Server{stdio(b, "bench", "ok"), {Name: "bench", Type: mcp.TypeHTTP, URL: streamable, Headers: map[string]string{"X-Test": "yes"}}} {
		b.Run(s.Kind(), func(b *testing.B) {
			m := start(b, []mcp.Server{s}, mcp.Options{})
			for _, t := range m.Tools() {
				if t.Spec().Name == "mcp__bench__echo" {
					benchCall(b, t)
					return
				}
			}
			b.Fatalf("no echo tool: %+v", m.Status())
		})
	}
}

// BenchmarkStart starts 1 and 10 stdio servers (this test binary) in
// parallel, until each has listed its tools, and closes them.
func BenchmarkStart(b *testing.B) {
	for _, n := range []int{1, 10} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchStart(b, n) })
	}
}

func benchStart(b *testing.B, n int) {
	var servers []mcp.Server
	for i := range n {
		servers = append(servers, stdio(b, fmt.Sprintf("s%d", i), "ok"))
	}
	for b.Loop() {
		m := mcp.Start(b.Context(), servers, mcp.Options{})
		for _, st := range m.Status() {
			if st.State != mcp.StateConnected {
				b.Fatalf("%s: %v", st.Name, st.Err)
			}
		}
		b.StopTimer()
		m.Close()
		b.StartTimer()
	}
}
