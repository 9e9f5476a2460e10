package toolsearch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/toolsearch"
)

// named is a tool with a name, a description and a schema, answering
// with its name.
type named struct{ name, desc string }

func (n named) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: n.name, Description: n.desc, InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)}
}
func (named) ReadOnly(json.RawMessage) bool { return true }
func (n named) Run(context.Context, tool.Call) (tool.Result, error) {
	return tool.Result{Content: n.name + " ran"}, nil
}

func specs(ts ...named) []llm.ToolSpec {
	var out []llm.ToolSpec
	for _, t := range ts {
		out = append(out, t.Spec())
	}
	return out
}

var corpus = []named{
	{"mcp__github__create_issue", "Create a new issue in a repository"},
	{"mcp__github__list_issues", "List the issues of a repository"},
	{"mcp__slack__send_message", "Send a message to a channel"},
	{"mcp__slack__list_channels", "List channels"},
	{"mcp__jira__createIssue", "Open a ticket"},
	{"NotebookEdit", "Edit a Jupyter notebook cell"},
}

func TestMatch(t *testing.T) {
	for _, tt := range []struct {
		query string
		max   int
		want  []string
	}{
		{"issue", 5, []string{"mcp__github__create_issue", "mcp__github__list_issues", "mcp__jira__createIssue"}},
		{"create issue", 5, []string{"mcp__github__create_issue", "mcp__jira__createIssue", "mcp__github__list_issues"}},
		{"issue", 1, []string{"mcp__github__create_issue"}},
		{"+slack", 5, []string{"mcp__slack__send_message", "mcp__slack__list_channels"}},
		{"+slack list", 5, []string{"mcp__slack__list_channels"}},
		{"+github +list issue", 5, []string{"mcp__github__list_issues"}},
		{"MESSAGE", 5, []string{"mcp__slack__send_message"}},
		{"notebook cell", 5, []string{"NotebookEdit"}},
		{"rocket", 5, nil},
		{"+", 5, nil},
	} {
		if got := toolsearch.Match(tt.query, specs(corpus...), tt.max); !slices.Equal(got, tt.want) {
			t.Errorf("Match(%q, %d) = %v; want %v", tt.query, tt.max, got, tt.want)
		}
	}
}

// registry returns a registry of the corpus, deferred, with ToolSearch.
func registry(t *testing.T) *tool.Registry {
	t.Helper()
	var ts []tool.Tool
	for _, n := range corpus {
		ts = append(ts, n)
	}
	reg, err := tool.NewRegistry(toolsearch.Policy{Mode: toolsearch.ModeAlways, Builtins: []string{"NotebookEdit"}}.Apply(ts)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func run(t *testing.T, reg *tool.Registry, input string) tool.Result {
	t.Helper()
	ts, _ := reg.Get(toolsearch.Name)
	res, err := ts.Run(tool.WithRegistry(t.Context(), reg), tool.Call{Input: json.RawMessage(input)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRun(t *testing.T) {
	reg := registry(t)
	if got := reg.Deferred(); len(got) != len(corpus) {
		t.Fatalf("deferred = %v; want the whole corpus", got)
	}
	res := run(t, reg, `{"query":"select:mcp__slack__send_message, NotebookEdit"}`)
	if res.IsError || !strings.Contains(res.Content, `{"name":"mcp__slack__send_message","description":"Send a message to a channel","input_schema":{"type":"object"`) {
		t.Fatalf("select = %+v", res)
	}
	var got []string
	for _, s := range reg.Specs() {
		got = append(got, s.Name)
	}
	if want := []string{"mcp__slack__send_message", "NotebookEdit", toolsearch.Name}; !slices.Equal(got, want) {
		t.Errorf("specs after select = %v; want %v", got, want)
	}
	if res := run(t, reg, `{"query":"issue","max_results":2}`); res.IsError || strings.Count(res.Content, `"name":`) != 2 {
		t.Errorf("issue, 2 = %+v", res)
	}
	for in, want := range map[string]string{
		`{"query":"select:Nope,mcp__slack__list_channels"}`: "no tool named Nope",
		`{"query":" "}`:                  "query is empty",
		`{"query":"x","max_results":99}`: "max_results is 99",
		`{"query":"x","limit":3}`:        `unknown field "limit"`,
		`{"query":7}`:                    `field "query" must be string`,
	} {
		if res := run(t, reg, in); !res.IsError || !strings.Contains(res.Content, want) {
			t.Errorf("%s = %+v; want an error with %q", in, res, want)
		}
	}
	if !reg.Pending("mcp__slack__list_channels") {
		t.Error("a failed select loaded a tool")
	}
	if res := run(t, reg, `{"query":"rocket"}`); res.IsError || !strings.Contains(res.Content, "No deferred tool matches") {
		t.Errorf("rocket = %+v", res)
	}
	ts, _ := reg.Get(toolsearch.Name)
	if res, _ := ts.Run(t.Context(), tool.Call{Input: json.RawMessage(`{"query":"x"}`)}); !res.IsError {
		t.Errorf("without a conversation = %+v", res)
	}
}

func TestPolicy(t *testing.T) {
	many := func(n, descLen int) []tool.Tool {
		var out []tool.Tool
		for i := range n {
			out = append(out, named{fmt.Sprintf("mcp__s__t%d", i), strings.Repeat("d", descLen)})
		}
		return append(out, named{"Read", "read a file"}, named{"NotebookEdit", "notebooks"})
	}
	deferred := func(ts []tool.Tool) (n int, search bool) {
		for _, t := range ts {
			if tool.IsDeferred(t) {
				n++
			}
			search = search || t.Spec().Name == toolsearch.Name
		}
		return n, search
	}
	for _, tt := range []struct {
		p              toolsearch.Policy
		tools, desc    int
		want           int
		wantSearchTool bool
	}{
		{toolsearch.Policy{}, 40, 10, 0, false},
		{toolsearch.Policy{}, 41, 10, 41, true},
		{toolsearch.Policy{}, 10, 8100, 10, true}, // about 20.3k tokens of schemas
		{toolsearch.Policy{}, 10, 7800, 0, false}, // about 19.8k
		{toolsearch.Policy{MaxTools: 5}, 6, 10, 6, true},
		{toolsearch.Policy{Mode: toolsearch.ModeAlways}, 1, 10, 1, true},
		{toolsearch.Policy{Mode: toolsearch.ModeNever, Builtins: []string{"NotebookEdit"}}, 100, 10, 0, false},
		{toolsearch.Policy{Builtins: []string{"NotebookEdit"}}, 1, 10, 1, true},
		{toolsearch.Policy{Mode: toolsearch.ModeAlways}, 0, 10, 0, false},
	} {
		n, s := deferred(tt.p.Apply(many(tt.tools, tt.desc)))
		if n != tt.want || s != tt.wantSearchTool {
			t.Errorf("%+v over %d tools of %d: %d deferred, ToolSearch %v; want %d, %v", tt.p, tt.tools, tt.desc, n, s, tt.want, tt.wantSearchTool)
		}
	}
	if _, err := (toolsearch.Policy{}).WithEnv("sometimes"); err == nil {
		t.Error("ENABLE_TOOL_SEARCH=sometimes accepted")
	}
	if p, _ := (toolsearch.Policy{}).WithEnv("false"); p.Mode != toolsearch.ModeNever {
		t.Errorf("ENABLE_TOOL_SEARCH=false: %+v", p)
	}
	if err := (toolsearch.Policy{Mode: "later"}).Check(); err == nil {
		t.Error("mode later accepted")
	}
}

// recorder keeps the requests a model was sent.
type recorder struct {
	llm.Model
	mu   sync.Mutex
	reqs []llm.Request // guarded by mu
}

func (r *recorder) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Model.Stream(ctx, req)
}

// TestAgent: in an agent's loop, the deferred tools are named in the
// system prompt and left out of the tools, a call before loading fails
// with a message naming ToolSearch, and after ToolSearch the tool is
// offered and runs.
func TestAgent(t *testing.T) {
	s, err := scripted.Parse([]byte(`{"turns":[
		{"match":{"turn":0},"reply":{"tool_calls":[{"name":"mcp__slack__send_message","input":{}}]}},
		{"match":{"turn":1},"reply":{"tool_calls":[{"name":"ToolSearch","input":{"query":"+slack send"}}]}},
		{"match":{"turn":2},"reply":{"tool_calls":[{"name":"mcp__slack__send_message","input":{"x":"hi"}}]}},
		{"match":{"turn":3},"reply":{"text":"done"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	m := &recorder{Model: scripted.New(s)}
	reg := registry(t)
	a, err := agent.New(agent.Config{Model: m, Tools: reg, System: "base"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(t.Context(), "send hi on slack"); err != nil {
		t.Fatal(err)
	}
	if !reg.Pending("mcp__slack__send_message") {
		t.Error("the agent loaded into the registry it was given, not its own conversation's")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.reqs) != 4 {
		t.Fatalf("%d requests; want 4", len(m.reqs))
	}
	names := func(req llm.Request) []string {
		var out []string
		for _, s := range req.Tools {
			out = append(out, s.Name)
		}
		return out
	}
	first := m.reqs[0]
	if !strings.Contains(first.System, "<available-deferred-tools>") || !strings.Contains(first.System, "\nmcp__jira__createIssue\n") {
		t.Errorf("system = %q; want the deferred tools named", first.System)
	}
	if got := names(first); !slices.Equal(got, []string{toolsearch.Name}) {
		t.Errorf("first request's tools = %v", got)
	}
	results := func(req llm.Request) string {
		last := req.Messages[len(req.Messages)-1]
		return last.Content[0].Text
	}
	if got := results(m.reqs[1]); !strings.Contains(got, "not loaded yet") || !strings.Contains(got, `select:mcp__slack__send_message`) {
		t.Errorf("an early call = %q", got)
	}
	if got := names(m.reqs[2]); !slices.Equal(got, []string{"mcp__slack__send_message", toolsearch.Name}) {
		t.Errorf("tools after the search = %v", got)
	}
	if got := results(m.reqs[3]); got != "mcp__slack__send_message ran" {
		t.Errorf("the loaded call = %q", got)
	}
}

func TestEnsure(t *testing.T) {
	plain := []tool.Tool{named{"Read", ""}}
	if got := toolsearch.Ensure(plain); len(got) != 1 {
		t.Errorf("no deferred tool: %d tools", len(got))
	}
	some := []tool.Tool{named{"Read", ""}, tool.Defer(named{"mcp__a__b", ""})}
	got := toolsearch.Ensure(some)
	if len(got) != 3 || got[2].Spec().Name != toolsearch.Name {
		t.Fatalf("a deferred tool without ToolSearch: %d tools", len(got))
	}
	if again := toolsearch.Ensure(got); len(again) != 3 {
		t.Errorf("ToolSearch added twice: %d tools", len(again))
	}
}
