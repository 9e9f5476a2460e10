package agent

import (
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/tool"
)

// CustomDisallowed lists the tools an agent made from a user's definition
// (not a built-in) never gets, on top of Disallowed: the tools that read or
// stop the session's other tasks, drive plan mode or ask the person. A
// definition can come from any repository a user clones; its agent works
// on its task and nothing else of the session.
var CustomDisallowed = append(slices.Clone(Disallowed), "TaskOutput", "TaskStop", "ExitPlanMode", "EnterPlanMode", "AskUserQuestion")

// ToolsFor narrows tools (a parent set already filtered for sub-agents) to
// what def allows: custom definitions lose CustomDisallowed; then, when
// def lists tools (other than "*"), only those stay; then its
// disallowedTools go. An MCP tool stays only if def lists no tools or
// names it.
func ToolsFor(tools *tool.Registry, def brief.Agent) *tool.Registry {
	all := def.Tools == nil || slices.Contains(def.Tools, "*")
	return tools.Filter(func(name string, _ tool.Tool) bool {
		switch {
		case !def.Builtin() && slices.Contains(CustomDisallowed, name) && !strings.HasPrefix(name, MCPPrefix):
			return false
		case !all && !slices.Contains(def.Tools, name):
			return false
		}
		return !slices.Contains(def.DisallowedTools, name)
	})
}

// resolve returns the definition called name among the configured ones,
// or false. Without Config.Agents every name resolves to a bare
// general-purpose definition of that name (the factory decides).
func (t *Tool) resolve(name string) (brief.Agent, bool) {
	if len(t.cfg.Agents) == 0 {
		return brief.Agent{Name: name, Source: brief.SourceBuiltin, Role: brief.RoleSubAgent}, true
	}
	return brief.FindAgent(t.cfg.Agents, name)
}
