package kit

import (
	"context"

	"github.com/troupe-dev/troupe/tool/agenttool"
	"github.com/troupe-dev/troupe/tool/tasktool"
	"github.com/troupe-dev/troupe/tool/toolsearch"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/bash"
	"github.com/troupe-dev/troupe/tool/filetool"
	"github.com/troupe-dev/troupe/tool/prtool"
	"github.com/troupe-dev/troupe/transcript"
)

// ToolOptions configure coreTools.
type ToolOptions struct {
	Cwd       string
	Registry  *task.Registry
	Model     llm.Model
	ModelName string
	Approver  agent.Approver
	// Teammates, when set, makes a named Agent call spawn a teammate.
	Teammates agenttool.Teammates
	// Remote, when set, runs Agent calls with isolation "Remote" on
	// Remote workers (Remote.go).
	Remote agenttool.Remote
	// Context, when set, gives sub-agents the project instructions and the
	// environment (context.go).
	Context *Context
	// Transcripts, when set, keeps each sub-agent's transcript, a sidechain of
	// parent (transcript.go).
	Transcripts *Transcripts
	Parent      string
	// WorktreeRoot is where agents' worktrees go; "" means beside the
	// repository (worktrees.go).
	WorktreeRoot string
	Fork         bool // --fork-subagents
	// ParentMode, when set, is the parent's permission mode now: a
	// sub-agent is judged in the narrower of its own mode and it, so a
	// lead switched from bypassPermissions to default takes its
	// sub-agents down with it (underParent). "" means no ceiling yet.
	ParentMode func() permission.Mode
	// Workflows, when set, adds the Workflow tool (workflow.go): the
	// person opted in (--workflows, setting workflows: true).
	Workflows *WorkflowOptions
	// GitHub configures subscribe_pr_activity (prtools.go); its unset
	// fields come from Context (prConfig), else prtool's defaults.
	GitHub prtool.Config
}

// Tools returns the tools of an agent rooted at cwd: the file tools,
// Bash (with background shells in reg), TaskOutput, TaskStop and Agent
// (sub-agents on the same model and permissions), and separately the
// SendMessage tool that addresses its background sub-agents (a team
// member's SendMessage falls through to it).
func Tools(o ToolOptions) (tools []tool.Tool, subSend tool.Tool) {
	cwd, reg := o.Cwd, o.Registry
	newBash := func(agentID string) tool.Tool {
		return bash.New(bash.Config{Dir: cwd,
			Background: tasktool.BashBackground(reg, tasktool.BashOptions{AgentID: agentID, Dir: cwd})})
	}
	var at *agenttool.Tool // set below, before any call
	byName := func(name string) (task.ID, bool) { return at.Lookup(name) }
	base := append(filetool.All(FileConfig(cwd, o.Approver)), filetool.NewNotebookEdit(FileConfig(cwd, o.Approver)), newBash(""),
		tasktool.NewOutput(tasktool.Config{Registry: reg, Resolve: byName}), tasktool.NewStop(reg, byName), NewMonitor(reg, o.Context, "", cwd))
	if st := o.Context.SkillTool(); st != nil {
		base = append(base, st) // sub-agents get it too
	}
	base = append(base, webTools(o)...) // web.go
	// mcp.go: every agent gets the MCP servers' tools
	builtins := len(base)
	base = append(base, o.Context.MCPTools()...)
	base = o.Context.Defer(base) // past the thresholds, MCP tools are named only until ToolSearch loads them
	parent, err := tool.NewRegistry(base...)
	if err != nil {
		// Unreachable while MCP names are unique and prefixed (mcp.Manager
		// keeps one tool per name); an agent without its own tools would
		// be worse than one without a server's.
		parent, _ = tool.NewRegistry(base[:builtins]...)
	}
	var types []brief.Agent // agents.go
	if o.Context != nil {
		types = o.Context.agents
	}
	factory := subAgentFactory(o, reg, newBash)
	at = agenttool.New(agenttool.Config{Tools: parent, Registry: reg, Teammates: o.Teammates, Remote: o.Remote, Agents: AgentDefs(types),
		Worktrees: &Worktrees{cwd: cwd, team: SubAgentWorktrees, root: o.WorktreeRoot}, Fork: o.Fork,
		OnFork: func(id string, cfg *agent.Config) {
			cfg.Transcript = o.Transcripts.Writer(id, transcript.KindSubAgent, o.Parent)
		},
		Factory: factory})
	out := append(base, at)
	out = append(out, PRTools(reg, "", prConfig(o))...) // prtools.go: the lead's, not its sub-agents'
	if o.Workflows != nil {                             // workflow.go
		out = append(out, workflowTool(o, reg, agenttool.FilterTools(parent, nil), AgentDefs(types), factory, &Worktrees{cwd: cwd, team: SubAgentWorktrees, root: o.WorktreeRoot}, nil))
	}
	return out, agenttool.NewSendMessage(at)
}

// subAgentFactory returns the factory of o's sub-agents: the Agent
// tool's, and workflows' agents (workflow.go) through the same one, so
// that both get the session's permissions, context and transcripts.
func subAgentFactory(o ToolOptions, reg *task.Registry, newBash func(agentID string) tool.Tool) agenttool.Factory {
	return func(_ context.Context, s agenttool.Spec) (agent.Config, error) {
		var ts []tool.Tool
		for _, name := range s.Tools.Names() {
			t, _ := s.Tools.Get(name)
			if name == "Bash" {
				t = tool.DeferredLike(newBash(s.AgentID), t) // its background shells end with the sub-agent
			}
			ts = append(ts, t)
		}
		tools, err := tool.NewRegistry(toolsearch.Ensure(ts)...) // its deferred tools stay loadable
		if err != nil {
			return agent.Config{}, err
		}
		ap := o.Approver
		if s.Dir != "" { // isolation "worktree" (worktrees.go)
			if tools, ap, err = toolsIn(s.Dir, tools, ap, reg, s.AgentID); err != nil {
				return agent.Config{}, err
			}
		}
		ap = underParent(ap, o.ParentMode)
		modelName := o.ModelName
		if s.Model != "" && s.Model != "inherit" { // the call's model, else its definition's
			modelName = s.Model
		}
		cfg := agent.Config{Model: o.Model, ModelName: modelName, Tools: tools, Approver: ap, Attach: o.Context.OutputDigest(reg, string(s.AgentID)),
			System: "You are a " + s.Type + " sub-agent. Do the task you are given, then reply with a concise report of what you found or did: it is all the caller sees."}
		if o.Context != nil {
			role, custom := subagentRole(s.Agent) // agents.go
			if cfg.System, err = o.Context.System(role, brief.Vars{Type: s.Type}, custom); err != nil {
				return agent.Config{}, err
			}
			cfg.Environment = o.Context.Environment
			cfg.Hooks = o.Context.hooks.ForAgent(string(s.AgentID), true)
		}
		if s.Dir != "" {
			cfg.System += WorktreeNote(s.Dir)
		}
		if w := o.Transcripts.Writer(string(s.AgentID), transcript.KindSubAgent, o.Parent); w != nil {
			cfg.Transcript = w
		}
		return o.Context.NarrowBySkills(cfg)
	}
}

// NewMonitor returns the Monitor tool of agent agentID ("" for the one
// that owns reg) working in dir: its monitors are tasks of reg, and it
// follows the resources of ac's MCP servers.
func NewMonitor(reg *task.Registry, ac *Context, agentID, dir string) tool.Tool {
	return tasktool.NewMonitor(tasktool.MonitorConfig{Registry: reg, AgentID: agentID, Dir: dir, Resources: ac.Resources()})
}

// pathJudge is the part of a permission layer the file tools consult
// after the approval (approve.Approver and swarm.Approver have it).
type pathJudge interface {
	Confine(tool, abs, real string) error
	Withholds(abs string) bool
}

// FileConfig returns the file tools' configuration for an agent rooted
// at cwd whose calls ap approves: the tools check the real path of what
// they open with ap and keep what its Read deny rules cover out of Glob
// and Grep results.
func FileConfig(cwd string, ap agent.Approver) filetool.Config {
	cfg := filetool.Config{Root: cwd}
	if j, ok := ap.(pathJudge); ok {
		cfg.Confine, cfg.Withhold = j.Confine, j.Withholds
	}
	return cfg
}

// underParent returns ap judging every call in the narrower of its own
// mode and parent's mode at the time of the call (permission.ChildMode):
// a child never runs wider than its parent, even when the parent's mode
// narrows after the child started. An approver of another kind, or a nil
// parent, is kept as it is.
func underParent(ap agent.Approver, parent func() permission.Mode) agent.Approver {
	a, ok := ap.(*approve.Approver)
	if !ok || a == nil || parent == nil {
		return ap
	}
	return ceiled{a, parent}
}

// ceiled is an approve.Approver under its parent's mode (underParent).
type ceiled struct {
	*approve.Approver
	parent func() permission.Mode
}

// Approve implements agent.Approver.
func (c ceiled) Approve(ctx context.Context, r agent.Request) (agent.Verdict, error) {
	p := c.parent()
	if p == "" {
		return c.Approver.Approve(ctx, r)
	}
	m := permission.ChildMode(p, c.Mode)
	if m == c.Mode {
		return c.Approver.Approve(ctx, r)
	}
	n := *c.Approver
	n.Mode = m
	return n.Approve(ctx, r)
}
