package mcp_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/mcp"
	"github.com/troupe-dev/troupe/mcp/mcptest"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/toolsearch"
)

// TestSearchDefers: past 40 MCP tools the default tool-search policy
// takes them out of the model's requests, and ToolSearch loads the ones
// found into the conversation that searched; a deferred tool still runs
// on its server once loaded.
func TestSearchDefers(t *testing.T) {
	for _, tt := range []struct {
		n        int
		deferred bool
	}{{39, false}, {60, true}} {
		m := start(t, []mcp.Server{{Name: "many", Type: mcp.TypeHTTP, URL: mcptest.ManyHTTP(t, tt.n)}}, mcp.Options{})
		reg, err := tool.NewRegistry(toolsearch.Policy{}.Apply(m.Tools())...)
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
			if len(got) != tt.n+1 || slices.Contains(got, toolsearch.Name) {
				t.Errorf("%d tools: specs %d, %v; want all and no search tool", tt.n+1, len(got), got)
			}
			continue
		}
		if !slices.Equal(got, []string{toolsearch.Name}) {
			t.Fatalf("%d tools: specs %v; want only %s", tt.n+1, got, toolsearch.Name)
		}
		ctx := tool.WithRegistry(t.Context(), reg)
		search, _ := reg.Get(toolsearch.Name)
		res, _ := search.Run(ctx, tool.Call{Input: []byte(`{"query":"rocket"}`)})
		if !strings.Contains(res.Content, `"name":"mcp__many__launch"`) || strings.Contains(res.Content, "op1") {
			t.Errorf("search rocket = %q", res.Content)
		}
		if got := names(); !slices.Equal(got, []string{"mcp__many__launch", toolsearch.Name}) {
			t.Errorf("specs after the search = %v; want launch loaded", got)
		}
		if !reg.Pending("mcp__many__op7") {
			t.Error("op7 is not pending before it is loaded")
		}
		if res, _ := search.Run(ctx, tool.Call{Input: []byte(`{"query":"select:mcp__many__op7"}`)}); res.IsError {
			t.Fatalf("select op7 = %+v", res)
		}
		op, _ := reg.Get("mcp__many__op7")
		if res, _ := op.Run(context.Background(), tool.Call{Input: []byte(`{}`)}); res.Content != "op7 done" {
			t.Errorf("a loaded deferred tool = %+v", res)
		}
		if other := reg.Fresh(); !other.Pending("mcp__many__op7") {
			t.Error("another conversation shares the loaded tools")
		}
	}
}
