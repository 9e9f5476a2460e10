package mcp_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/mcp"
	"github.com/troupe-dev/troupe/mcp/mcptest"
	"github.com/troupe-dev/troupe/tool"
)

// TestSearchDefers: past 50 tools the tools leave the model's requests
// and SearchMcpTools loads the ones found; they stay callable by name.
func TestSearchDefers(t *testing.T) {
	for _, tt := range []struct {
		n        int
		deferred bool
	}{{49, false}, {60, true}} {
		m := start(t, []mcp.Server{{Name: "many", Type: mcp.TypeHTTP, URL: mcptest.ManyHTTP(t, tt.n)}}, mcp.Options{})
		reg, err := tool.NewRegistry(m.Tools()...)
		if err != nil {
			t.Fatal(err)
		}
		names := func() []string {
			var out []string
			for _, s := range reg.Specs() {
				out = append(out, s.Name)
			}
			return out
		}
		got := names()
		if !tt.deferred {
			if len(got) != tt.n+1 || slices.Contains(got, mcp.SearchToolName) {
				t.Errorf("%d tools: specs %d, %v; want all and no search tool", tt.n+1, len(got), got)
			}
			continue
		}
		if !slices.Equal(got, []string{mcp.SearchToolName}) {
			t.Fatalf("%d tools: specs %v; want only %s", tt.n+1, got, mcp.SearchToolName)
		}
		search, _ := reg.Get(mcp.SearchToolName)
		res, _ := search.Run(t.Context(), tool.Call{Input: []byte(`{"query":"rocket"}`)})
		if !strings.Contains(res.Content, "mcp__many__launch") || strings.Contains(res.Content, "op1") {
			t.Errorf("search rocket = %q", res.Content)
		}
		if got := names(); !slices.Equal(got, []string{"mcp__many__launch", mcp.SearchToolName}) {
			t.Errorf("specs after the search = %v; want launch loaded", got)
		}
		op, _ := reg.Get("mcp__many__op7")
		if res, _ := op.Run(t.Context(), tool.Call{Input: []byte(`{}`)}); res.Content != "op7 done" {
			t.Errorf("a deferred tool called by name = %+v", res)
		}
		if res, _ := search.Run(t.Context(), tool.Call{Input: []byte(`{"query":"  "}`)}); !res.IsError {
			t.Errorf("empty query = %+v; want an error result", res)
		}
	}
}
