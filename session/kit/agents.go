package kit

import (
	"slices"

	"github.com/troupe-dev/troupe/tool/agenttool"

	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/tool"
)

// AgentDefs converts loaded agent types for the Agent tool.
func AgentDefs(types []brief.Agent) []agenttool.Definition {
	out := make([]agenttool.Definition, len(types))
	for i, a := range types {
		out[i] = agentDef(a)
	}
	return out
}

func agentDef(a brief.Agent) agenttool.Definition {
	return agenttool.Definition{Name: a.Name, Description: a.Description, Tools: a.Tools, DisallowedTools: a.DisallowedTools,
		Model: a.Model, PermissionMode: a.PermissionMode, Color: a.Color, Builtin: a.Builtin(), Prompt: a.Prompt, Role: a.Role}
}

// subagentRole returns the role template and the custom prompt of a
// sub-agent of type def (a bare name resolves to the sub-agent role).
func subagentRole(def agenttool.Definition) (role, custom string) {
	if def.Role == "" && def.Prompt == "" {
		return brief.RoleSubAgent, ""
	}
	return def.Role, def.Prompt
}

// AsAgentType shapes a teammate spawned from agent type typ: its core
// tools are cut to the definition (agenttool.ToolsFor), the team tools
// (keep) always stay, and a custom definition's prompt follows the
// teammate's own. An empty or unknown type changes nothing: members made
// by other tools may carry any label.
func AsAgentType(types []brief.Agent, typ string, tools *tool.Registry, keep []string, system string) (*tool.Registry, string) {
	def, ok := brief.FindAgent(types, typ)
	if typ == "" || !ok {
		return tools, system
	}
	allowed := agenttool.ToolsFor(tools, agentDef(def))
	tools = tools.Filter(func(name string, _ tool.Tool) bool {
		_, in := allowed.Get(name)
		return in || slices.Contains(keep, name)
	})
	if def.Prompt != "" {
		system += "\n\n# Your agent type: " + def.Name + "\n\n" + def.Prompt
	}
	return tools, system
}
