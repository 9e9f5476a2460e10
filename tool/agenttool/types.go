package agenttool

import (
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/tool"
)

// CustomDisallowed lists the tools an agent made from a user's definition
// (not a built-in) never gets, on top of Disallowed: the tools that read or
// stop the session's other tasks, drive plan mode or ask the person. A
// definition can come from any repository a user clones; its agent works
// on its task and nothing else of the session.
var CustomDisallowed = append(slices.Clone(Disallowed), "TaskOutput", "TaskStop", "ExitPlanMode", "EnterPlanMode", "AskUserQuestion")

// Definition is an agent type that subagent_type selects: a built-in or
// a user's definition file (the caller loads them, as package brief does).
type Definition struct {
	Name, Description string
	// Tools, when not nil, is the only tools the agent gets (nil or
	// ["*"]: all); DisallowedTools are taken away after it.
	Tools, DisallowedTools []string
	Model                  string // "" inherits the caller's
	PermissionMode         string // for a teammate; "" inherits
	Color                  string // a teammate's color; "" picks the next free one
	Builtin                bool   // troupe's own; custom ones lose CustomDisallowed too
	// Prompt is a custom type's system prompt; Role names a built-in's
	// role template. Both are for the Factory.
	Prompt, Role string
}

// ToolsFor narrows tools (a parent set already filtered for sub-agents) to
// what def allows: custom definitions lose CustomDisallowed; then, when
// def lists tools (other than "*"), only those stay; then its
// disallowedTools go. An MCP tool stays only if def lists no tools or
// names it.
func ToolsFor(tools *tool.Registry, def Definition) *tool.Registry {
	all := def.Tools == nil || slices.Contains(def.Tools, "*")
	return tools.Filter(func(name string, _ tool.Tool) bool {
		switch {
		case !def.Builtin && slices.Contains(CustomDisallowed, name) && !strings.HasPrefix(name, MCPPrefix):
			return false
		case !all && !slices.Contains(def.Tools, name):
			return false
		}
		return !slices.Contains(def.DisallowedTools, name)
	})
}

// resolve returns the definition called name among the configured ones,
// or false. Without Config.Agents every name resolves to a bare built-in
// definition of that name (the factory decides what it is).
func (t *Tool) resolve(name string) (Definition, bool) {
	if len(t.cfg.Agents) == 0 {
		return Definition{Name: name, Builtin: true}, true
	}
	i := slices.IndexFunc(t.cfg.Agents, func(d Definition) bool { return d.Name == name })
	if i < 0 {
		return Definition{}, false
	}
	return t.cfg.Agents[i], true
}

// names returns the configured types' names.
func (t *Tool) names() []string {
	out := make([]string, len(t.cfg.Agents))
	for i, d := range t.cfg.Agents {
		out[i] = d.Name
	}
	return out
}
