// Package toolsearch is the ToolSearch tool and the policy that decides
// which tools are deferred: named to the model without their schemas
// until ToolSearch loads them (tool.Deferrer), as Claude Code does when
// its MCP servers offer many tools (docs/tools.md).
package toolsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// Name is the tool's name.
const Name = "ToolSearch"

// DefaultMaxResults is how many tools a keyword search loads when the
// call does not say; MaxResults is the most it may ask for.
const (
	DefaultMaxResults = 5
	MaxResults        = 50
)

// Tool is the ToolSearch tool. It searches the deferred tools of the
// conversation that calls it (tool.RegistryFrom) and loads what it finds.
type Tool struct{}

// New returns the ToolSearch tool.
func New() *Tool { return &Tool{} }

var _ tool.Tool = (*Tool)(nil)

const description = `Load the definitions of deferred tools, so that you can call them. Deferred tools are listed by name only (in <available-deferred-tools>); calling one before it is loaded fails.

Query forms:
- "select:Name1,Name2" loads exactly these tools (use it when you know the names).
- Keywords, such as "github issue", rank the deferred tools by the words found in their names and descriptions and load the best max_results of them.
- "+word" requires the word in the tool's name: "+slack send" loads tools whose name holds "slack", ranked by "send".

The result holds each loaded tool's full definition (name, description and input schema), one JSON object a line; the tools are callable from your next call on, for the rest of the conversation.`

const schema = `{"type":"object","properties":{"query":{"type":"string","description":"\"select:Name1,Name2\" for exact names, or keywords; \"+word\" requires the word in the name"},"max_results":{"type":"integer","minimum":1,"maximum":50,"description":"how many tools a keyword query loads (default 5)"}},"required":["query"],"additionalProperties":false}`

// Spec implements tool.Tool.
func (*Tool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: Name, Description: description, InputSchema: json.RawMessage(schema)}
}

// ReadOnly implements tool.Tool: loading a definition changes only what
// the conversation is offered.
func (*Tool) ReadOnly(json.RawMessage) bool { return true }

// Input is ToolSearch's input.
type Input struct {
	Query      string `json:"query"`
	MaxResults int    `json:"max_results,omitempty"`
}

// Run implements tool.Tool.
func (*Tool) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	var in Input
	if res, ok := tool.Decode(Name, c.Input, &in); !ok {
		return res, nil
	}
	reg, ok := tool.RegistryFrom(ctx)
	if !ok {
		return tool.Errorf("%s: no conversation to load tools into", Name), nil
	}
	switch {
	case strings.TrimSpace(in.Query) == "":
		return tool.Errorf("%s: invalid input: query is empty; give \"select:Name\" or keywords", Name), nil
	case in.MaxResults < 0 || in.MaxResults > MaxResults:
		return tool.Errorf("%s: invalid input: max_results is %d; want 1 to %d", Name, in.MaxResults, MaxResults), nil
	case in.MaxResults == 0:
		in.MaxResults = DefaultMaxResults
	}
	var names []string
	if list, ok := strings.CutPrefix(strings.TrimSpace(in.Query), "select:"); ok {
		var unknown []string
		for _, n := range strings.Split(list, ",") {
			n = strings.TrimSpace(n)
			if n == "" || slices.Contains(names, n) {
				continue
			}
			if _, ok := reg.Get(n); !ok {
				unknown = append(unknown, n)
				continue
			}
			names = append(names, n)
		}
		if len(unknown) > 0 {
			return tool.Errorf("%s: no tool named %s; the deferred tools are: %s", Name, strings.Join(unknown, ", "), strings.Join(reg.Deferred(), ", ")), nil
		}
	} else {
		names = Match(in.Query, specs(reg), in.MaxResults)
		if len(names) == 0 {
			return tool.Result{Content: fmt.Sprintf("No deferred tool matches %q. The deferred tools are: %s", in.Query, strings.Join(reg.Deferred(), ", "))}, nil
		}
	}
	reg.Load(names...)
	return tool.Result{Content: Render(reg, names)}, nil
}

// specs returns the specs of reg's deferred tools.
func specs(reg *tool.Registry) []llm.ToolSpec {
	var out []llm.ToolSpec
	for _, n := range reg.Deferred() {
		t, _ := reg.Get(n)
		out = append(out, t.Spec())
	}
	return out
}

// Render returns the result text of loading names: a header line, then
// each tool's definition as one JSON object a line (the form agent reads
// back from a resumed conversation).
func Render(reg *tool.Registry, names []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Loaded %d tool(s); they are callable now:\n", len(names))
	for _, n := range names {
		t, _ := reg.Get(n)
		s := t.Spec()
		line, _ := json.Marshal(struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		}{s.Name, s.Description, s.InputSchema})
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// Match returns the names of the tools a keyword query finds among
// specs, best first, at most max. A "+word" term must be in the name;
// the other terms score 3 for a word of the name (split at _, - and case
// changes), 2 for a part of the name, 1 for the description. With only
// required terms, every tool holding them matches, in the given order.
func Match(query string, specs []llm.ToolSpec, max int) []string {
	var required, words []string
	for _, w := range strings.Fields(strings.ToLower(query)) {
		if r, ok := strings.CutPrefix(w, "+"); ok {
			if r != "" {
				required = append(required, r)
			}
			continue
		}
		words = append(words, w)
	}
	type hit struct {
		name  string
		score int
	}
	var hits []hit
	for _, s := range specs {
		name := strings.ToLower(s.Name)
		if !all(required, func(r string) bool { return strings.Contains(name, r) }) {
			continue
		}
		parts, desc := nameWords(s.Name), strings.ToLower(s.Description)
		score := 0
		for _, w := range words {
			switch {
			case slices.Contains(parts, w):
				score += 3
			case strings.Contains(name, w):
				score += 2
			}
			if strings.Contains(desc, w) {
				score++
			}
		}
		if score > 0 || len(words) == 0 && len(required) > 0 {
			hits = append(hits, hit{s.Name, score})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return b.score - a.score })
	var out []string
	for _, h := range hits[:min(len(hits), max)] {
		out = append(out, h.name)
	}
	return out
}

func all(list []string, f func(string) bool) bool {
	for _, s := range list {
		if !f(s) {
			return false
		}
	}
	return true
}

// nameWords splits a tool name into lower-case words: at _, -, and where
// a lower-case letter or digit meets an upper-case one
// (mcp__github__createIssue: mcp, github, create, issue).
func nameWords(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prev := rune(0)
	for _, c := range name {
		switch {
		case c == '_' || c == '-':
			flush()
		case unicode.IsUpper(c) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			flush()
			cur = append(cur, c)
		default:
			cur = append(cur, c)
		}
		prev = c
	}
	flush()
	return out
}
