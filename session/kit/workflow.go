package kit

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/agenttool"
	"github.com/troupe-dev/troupe/workflow"
)

// WorkflowOptions configure the lead's Workflow tool (docs/workflows.md).
type WorkflowOptions struct {
	// Root is where run folders go: the session's folder's workflows/.
	Root string
	// Dirs are the folders of named workflows (workflow.Dirs).
	Dirs []string
	// Options bound each run (concurrency, agent cap, budget).
	Options workflow.Options
	// Runner is set by Tools: the runner of the agent's workflows, for
	// `troupe workflow run`, which drives the engine itself.
	Runner workflow.Runner
}

// workflowTool returns the Workflow tool of the agent o describes: each
// workflow agent is a sub-agent made by factory, the Agent tool's, so
// that it has the session's permissions (its asks go where sub-agents'
// go) and transcripts.
// tools is the parent's set already filtered for its sub-agents.
func workflowTool(o ToolOptions, reg *task.Registry, tools *tool.Registry, defs []agenttool.Definition, factory agenttool.Factory, trees agenttool.Isolation, done func(string)) tool.Tool {
	r := &SubAgentRunner{Factory: factory, Tools: tools, Agents: defs, Registry: reg, Cwd: o.Cwd, Worktrees: trees, Done: done}
	o.Workflows.Runner = r
	root := o.Workflows.Root
	return workflow.NewTool(workflow.ToolConfig{Registry: reg, Root: root, Dirs: o.Workflows.Dirs, Runner: r, Options: o.Workflows.Options,
		Roots: func() []string { // <home>/sessions/*/workflows: a run of an earlier session resumes too
			roots, _ := filepath.Glob(filepath.Join(filepath.Dir(filepath.Dir(root)), "*", filepath.Base(root)))
			return roots
		}})
}

// SubAgentRunner runs workflow agents as sub-agents (workflow.Runner).
type SubAgentRunner struct {
	Factory agenttool.Factory
	// Tools is the parent's tool set filtered for sub-agents.
	Tools *tool.Registry
	// Agents are the agent types agentType selects; empty accepts any.
	Agents []agenttool.Definition
	// Registry, when set, holds the agents' background shells (ended
	// with the agent).
	Registry *task.Registry
	// Cwd is the session's folder: opts.cwd is taken inside it.
	Cwd string
	// Worktrees, when set, serves isolation "worktree".
	Worktrees agenttool.Isolation
	// Done, when set, is called with each agent's id when its run is over
	// (a coordinator's worker gives back the files it claimed).
	Done func(agentID string)
}

var _ workflow.Runner = (*SubAgentRunner)(nil)

// ErrNoRemote is the refusal of isolation "remote" in a workflow.
var ErrNoRemote = errors.New(`isolation "remote": workflow agents do not run on remote workers yet; omit isolation to run the agent here`)

// RunAgent implements workflow.Runner.
func (r *SubAgentRunner) RunAgent(ctx context.Context, req workflow.Request) (workflow.Reply, error) {
	typ := req.AgentType
	if typ == "" {
		typ = agenttool.DefaultType
	}
	def := agenttool.Definition{Name: typ, Builtin: true}
	if len(r.Agents) > 0 {
		i := slices.IndexFunc(r.Agents, func(d agenttool.Definition) bool { return d.Name == typ })
		if i < 0 {
			names := make([]string, len(r.Agents))
			for k, d := range r.Agents {
				names[k] = d.Name
			}
			return workflow.Reply{}, fmt.Errorf("agentType %q is unknown; available: %s", typ, strings.Join(names, ", "))
		}
		def = r.Agents[i]
	}
	tools := agenttool.ToolsFor(r.Tools, def)
	if req.Tools != nil {
		for _, n := range req.Tools {
			if _, ok := tools.Get(n); !ok {
				return workflow.Reply{}, fmt.Errorf("tools: %q is not a tool this agent may have (%s)", n, strings.Join(tools.Names(), ", "))
			}
		}
		tools = tools.Filter(func(name string, _ tool.Tool) bool { return slices.Contains(req.Tools, name) })
	}
	id := task.NewID(task.LocalAgent)
	if r.Done != nil {
		defer r.Done(string(id))
	}
	spec := agenttool.Spec{AgentID: string(id), Type: typ, Model: req.Model, Description: req.Label, Prompt: req.Prompt, Tools: tools, Agent: def}
	if spec.Model == "" {
		spec.Model = def.Model
	}
	var end func(context.Context) (string, bool)
	switch req.Isolation {
	case "remote":
		return workflow.Reply{}, ErrNoRemote
	case "worktree":
		if r.Worktrees == nil {
			return workflow.Reply{}, errors.New(`isolation "worktree" is not available in this session`)
		}
		ws, err := r.Worktrees.Isolate(ctx, string(id))
		if err != nil {
			return workflow.Reply{}, fmt.Errorf("isolation \"worktree\": %w", err)
		}
		spec.Dir, end = ws.Dir, ws.End
	}
	if req.Cwd != "" && spec.Dir == "" {
		dir, err := within(r.Cwd, req.Cwd)
		if err != nil {
			return workflow.Reply{}, err
		}
		spec.Dir = dir
	}
	// The worktree ends with the agent: removed when nothing changed,
	// else kept, and a text answer says where (a JSON answer stays JSON).
	note := ""
	finish := func() {
		if end != nil {
			note, _ = end(context.WithoutCancel(ctx))
			end = nil
		}
	}
	defer finish()
	cfg, err := r.Factory(ctx, spec)
	if err != nil {
		return workflow.Reply{}, fmt.Errorf("could not create the agent: %w", err)
	}
	// Its permission questions name the workflow and the call's label.
	cfg.Approver = askingAs(cfg.Approver, fmt.Sprintf("workflow %s: %s", req.Workflow, req.Label))
	var usage workflow.Usage
	var latestIn, out int64
	prev := cfg.OnEvent
	cfg.OnEvent = func(e agent.Event) {
		if prev != nil {
			prev(e)
		}
		switch {
		case e.Type == agent.EventAssistant && e.Usage != nil:
			latestIn = e.Usage.TotalInput()
			out += e.Usage.OutputTokens
			if req.Activity != nil {
				req.Activity(workflow.Activity{Text: "thinking", Tokens: latestIn + out, AgentID: string(id)})
			}
		case e.Type == agent.EventToolUse && e.Call != nil && req.Activity != nil:
			req.Activity(workflow.Activity{Text: e.Call.Name, Tokens: latestIn + out, AgentID: string(id)})
		}
	}
	ag, err := agent.New(cfg)
	if err != nil {
		return workflow.Reply{}, fmt.Errorf("could not create the agent: %w", err)
	}
	if req.Activity != nil { // its id, for its transcript (<session>/<id>.jsonl)
		req.Activity(workflow.Activity{Text: "starting", AgentID: string(id)})
	}
	res, err := ag.Run(ctx, req.Prompt)
	ag.Kill()
	if r.Registry != nil {
		r.Registry.KillForAgent(context.WithoutCancel(ctx), string(id))
	}
	usage = workflow.Usage{InputTokens: res.Usage.TotalInput(), OutputTokens: res.Usage.OutputTokens, ToolUses: res.ToolUses}
	if err != nil {
		return workflow.Reply{Usage: usage}, err
	}
	text := strings.TrimSpace(res.Text)
	if res.StopReason == agent.StopMaxTurns {
		return workflow.Reply{Text: text, Usage: usage}, errors.New("the agent stopped at its turn limit before finishing")
	}
	finish()
	if note != "" && req.Schema == nil {
		text += "\n\n" + note
	}
	return workflow.Reply{Text: text, Usage: usage}, nil
}

// within resolves dir against root and refuses a folder outside it.
func within(root, dir string) (string, error) {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	dir = filepath.Clean(dir)
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("cwd %s is outside the session's folder %s", dir, root)
	}
	return dir, nil
}

// askingAs returns ap with who as the agent its questions and audit
// entries name; an approver of another kind is kept as it is.
func askingAs(ap agent.Approver, who string) agent.Approver {
	switch a := ap.(type) {
	case ceiled:
		c := *a.Approver
		c.Agent = who
		return ceiled{&c, a.parent}
	case *approve.Approver:
		if a == nil {
			return ap
		}
		c := *a
		c.Agent = who
		return &c
	}
	return ap
}
