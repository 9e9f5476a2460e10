package toolsearch

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// The defaults of Policy: past either, MCP tools are deferred.
const (
	DefaultMaxTools  = 40
	DefaultMaxTokens = 20000
)

// Modes of Policy.
const (
	ModeAuto   = "auto"   // defer MCP tools past the thresholds (the default)
	ModeAlways = "always" // always defer MCP tools
	ModeNever  = "never"  // defer nothing; no ToolSearch
)

// Policy decides which tools are deferred: the settings key "toolSearch"
// ({"mode", "maxTools", "maxTokens", "deferBuiltins"}), or
// ENABLE_TOOL_SEARCH (true, false, auto) as in Claude Code.
type Policy struct {
	Mode string `json:"mode,omitempty"`
	// MaxTools is how many MCP tools may go into every request; more are
	// deferred. Zero means DefaultMaxTools.
	MaxTools int `json:"maxTools,omitempty"`
	// MaxTokens is how many tokens of MCP tool schemas (estimated at 4
	// characters a token: Tokens) may go into every request; more are
	// deferred. Zero means DefaultMaxTokens.
	MaxTokens int `json:"maxTokens,omitempty"`
	// Builtins are names of other tools (built-ins such as NotebookEdit)
	// to defer whatever the count.
	Builtins []string `json:"deferBuiltins,omitempty"`
}

// Check returns an error naming a malformed field.
func (p Policy) Check() error {
	switch p.Mode {
	case "", ModeAuto, ModeAlways, ModeNever:
	default:
		return fmt.Errorf("toolSearch.mode %q: want auto, always or never", p.Mode)
	}
	if p.MaxTools < 0 || p.MaxTokens < 0 {
		return fmt.Errorf("toolSearch: maxTools and maxTokens must not be negative")
	}
	return nil
}

// WithEnv returns p with ENABLE_TOOL_SEARCH's value applied: true is
// always, false is never, auto (or auto:N, N ignored) is auto; "" keeps p.
func (p Policy) WithEnv(v string) (Policy, error) {
	switch v = strings.ToLower(strings.TrimSpace(v)); {
	case v == "":
	case v == "true" || v == "1":
		p.Mode = ModeAlways
	case v == "false" || v == "0":
		p.Mode = ModeNever
	case v == "auto" || strings.HasPrefix(v, "auto:"):
		p.Mode = ModeAuto
	default:
		return p, fmt.Errorf("ENABLE_TOOL_SEARCH=%s: want true, false or auto", v)
	}
	return p, nil
}

// IsMCP reports whether name is an MCP tool's (mcp__<server>__<tool>).
func IsMCP(name string) bool { return strings.HasPrefix(name, "mcp__") }

// Tokens estimates the tokens specs cost in a request: the JSON of their
// names, descriptions and schemas at 4 characters a token.
func Tokens(specs []llm.ToolSpec) int {
	n := 0
	for _, s := range specs {
		b, _ := json.Marshal(struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		}{s.Name, s.Description, s.InputSchema})
		n += len(b)
	}
	return (n + 3) / 4
}

// Defers reports whether p defers the MCP tools of specs.
func (p Policy) Defers(mcp []llm.ToolSpec) bool {
	switch p.Mode {
	case ModeNever:
		return false
	case ModeAlways:
		return len(mcp) > 0
	}
	maxTools, maxTokens := p.MaxTools, p.MaxTokens
	if maxTools == 0 {
		maxTools = DefaultMaxTools
	}
	if maxTokens == 0 {
		maxTokens = DefaultMaxTokens
	}
	return len(mcp) > maxTools || Tokens(mcp) > maxTokens
}

// Apply returns tools with the ones p defers wrapped by tool.Defer and,
// when any is deferred, ToolSearch added (once). Tools already deferred
// stay so.
func (p Policy) Apply(tools []tool.Tool) []tool.Tool {
	if p.Mode == ModeNever {
		return tools
	}
	var mcp []llm.ToolSpec
	has := false
	for _, t := range tools {
		s := t.Spec()
		if IsMCP(s.Name) {
			mcp = append(mcp, s)
		}
		has = has || s.Name == Name
	}
	deferMCP := p.Defers(mcp)
	out := make([]tool.Tool, 0, len(tools)+1)
	any := false
	for _, t := range tools {
		n := t.Spec().Name
		if deferMCP && IsMCP(n) || slices.Contains(p.Builtins, n) {
			t = tool.Defer(t)
		}
		if d, ok := t.(tool.Deferrer); ok && d.Deferred() {
			any = true
		}
		out = append(out, t)
	}
	if any && !has {
		out = append(out, New())
	}
	return out
}

// Ensure returns tools with ToolSearch added when one of them is deferred
// and ToolSearch is not among them: an agent given a narrowed set of
// tools (a sub-agent type that names its tools) can still load the
// deferred ones it has.
func Ensure(tools []tool.Tool) []tool.Tool {
	deferred := false
	for _, t := range tools {
		if t.Spec().Name == Name {
			return tools
		}
		deferred = deferred || tool.IsDeferred(t)
	}
	if !deferred {
		return tools
	}
	return append(tools, New())
}
