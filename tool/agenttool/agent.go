// Package agenttool provides the Agent tool: the model starts a sub-agent, a
// fresh agent (package github.com/troupe-dev/troupe/agent) with its own
// conversation and a filtered tool set, to work on a task.
//
// In the foreground (run_in_background false) the call runs the sub-agent
// to completion and returns its final text and usage. In the background it
// registers a local_agent task in the session's task registry (package
// github.com/troupe-dev/troupe/task) and returns its id at once; the task's
// detail tracks the sub-agent's progress (tool uses, tokens) while it runs,
// and its end produces the <task-notification> with the result and usage.
// TaskOutput reads a background agent's state, TaskStop stops it, and Send
// queues a message for a running one. A background sub-agent is kept after
// it ends (the last Config.KeepFinished of them), so that the SendMessage
// tool (NewSendMessage) can resume it with its conversation.
//
// The tool set of a sub-agent is its parent's minus the Agent tool and the
// team tools (see FilterTools); MCP tools (mcp__ prefix) are always kept.
// Team-related inputs (team_name, mode) are accepted and ignored, unless
// Config.Teammates is set: then a call with a name spawns a teammate of
// the caller's team through it (see Teammates), with the mode it asks for.
//
// A Tool is safe for concurrent use.
package agenttool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	coreagent "github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	taskreg "github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
)

// DefaultType is the subagent_type of a call that gives none.
const DefaultType = "general-purpose"

// Disallowed lists the tools a sub-agent never gets: the Agent tool (and
// its old name, Task), so that sub-agents do not nest, the team tools,
// the tools that move the whole session (plan mode, worktrees), and
// Monitor: a sub-agent's run ends with its answer, so no idle sub-agent
// is there to wake (its caller watches instead).
var Disallowed = []string{"Agent", "Task", "TeamCreate", "TeamDelete", "SendMessage", "SyntheticOutput", "EnterPlanMode", "EnterWorktree", "ExitWorktree", "Monitor"}

// AsyncAllowed lists the tools a background sub-agent may have (MCP tools
// aside): the core file and shell tools and the task tools. A background
// agent works alone, so nothing that needs a person or a team is on it.
var AsyncAllowed = []string{"Read", "Write", "Edit", "Glob", "Grep", "Bash", "TaskOutput", "TaskStop", "WebFetch", "WebSearch", "NotebookEdit", "TodoWrite", "ToolSearch"}

// MCPPrefix starts the name of an MCP tool; such tools are always allowed.
const MCPPrefix = "mcp__"

// FilterTools returns the tools of parent a sub-agent may use: every tool
// but those named in deny (Disallowed when deny is nil), MCP tools always
// kept. A nil parent gives an empty registry.
func FilterTools(parent *tool.Registry, deny []string) *tool.Registry {
	if parent == nil {
		r, _ := tool.NewRegistry()
		return r
	}
	if deny == nil {
		deny = Disallowed
	}
	return parent.Filter(func(name string, _ tool.Tool) bool {
		return strings.HasPrefix(name, MCPPrefix) || !slices.Contains(deny, name)
	})
}

// Spec describes the sub-agent a call asks for; the Factory turns it into
// an agent configuration.
type Spec struct {
	// AgentID is the sub-agent's id; for a background agent it is also
	// its task id. Shells it starts in the background should carry it
	// (tool/tasktool.BashOptions.AgentID): they are stopped when it ends.
	AgentID     string
	Type        string // subagent_type, DefaultType when not given
	Model       string // the model alias asked for; "" inherits the parent's
	Name        string // optional name
	Description string
	Prompt      string
	Background  bool
	// Tools is the parent's tool set filtered for a sub-agent
	// (FilterTools, then ToolsFor its definition); the Factory may use
	// it as Config.Tools or build its own from the same names.
	Tools *tool.Registry
	// Agent is the definition Type resolved to (Config.Agents); its
	// Prompt, or Role for a built-in, is the sub-agent's system prompt.
	Agent Definition
	// Dir, when set, is the agent's own folder (isolation "worktree"):
	// its file tools and shell must work there, not in the parent's.
	Dir string
}

// Factory returns the configuration of a fresh sub-agent (model, system
// prompt for its type, tools, approver). An error is shown to the model;
// wrap ErrUnknownType for an unknown subagent_type. The tool sets
// Config.OnEvent on top of the factory's own.
type Factory func(ctx context.Context, s Spec) (coreagent.Config, error)

// ErrUnknownType is wrapped by a Factory error for an unknown subagent_type.
var ErrUnknownType = errors.New("unknown subagent_type")

// Config configures the Agent tool.
type Config struct {
	// Factory builds each sub-agent; required.
	Factory Factory
	// Tools is the parent's tool set, filtered for each sub-agent.
	Tools *tool.Registry
	// Deny names the tools sub-agents never get; nil means Disallowed.
	Deny []string
	// AsyncAllow, when not nil, is the only tools (MCP tools aside) a
	// background sub-agent gets, after Deny; nil means AsyncAllowed.
	AsyncAllow []string
	// Registry is the session's task registry; without it background
	// calls are refused.
	Registry *taskreg.Registry
	// Types, when set, lists the valid subagent_type values.
	Types []string
	// Agents, when set, are the agent types subagent_type selects
	// (the built-ins and the loaded definitions): an unknown type is
	// refused with the list of known ones, and each agent's tools are cut
	// to its definition (ToolsFor).
	Agents []Definition
	// DefaultBackground is what a call that omits run_in_background does.
	DefaultBackground bool
	// KeepFinished is how many finished background sub-agents are kept
	// for SendMessage to resume (default DefaultKeepFinished); beyond it
	// the oldest is dropped and killed.
	KeepFinished int
	// Teammates, when set, makes a call with a `name` (and the caller
	// leading a team) spawn a teammate instead of a sub-agent.
	Teammates Teammates
	// Worktrees, when set, runs a call with isolation "worktree" in the
	// agent's own folder (see Isolation); without it such a call is
	// refused.
	Worktrees Isolation
	// Fork makes a call without subagent_type (and without a name or an
	// isolation) a fork of the calling agent: it starts with the
	// caller's conversation, system prompt and tools plus its directive,
	// so that the request prefix is the caller's byte for byte and the
	// provider's prompt cache serves it. A fork cannot start agents.
	// Coordinator mode leaves it off.
	Fork bool
	// OnFork, when set, may adjust a fork's configuration (its
	// transcript) before it is made; id is its agent id.
	OnFork func(id string, cfg *coreagent.Config)
	// Remote, when set, runs a call with isolation "remote" on a remote
	// worker (see Remote); without it such a call is refused.
	Remote Remote
}

// DefaultKeepFinished is the default of Config.KeepFinished.
const DefaultKeepFinished = 50

// Tool is the Agent tool.
type Tool struct {
	cfg Config

	mu       sync.Mutex
	agents   map[string]*live // background sub-agents by task id and by name (the latest to use it); guarded by mu
	finished []*live          // the finished ones, oldest first; guarded by mu
}

// live is a background sub-agent, running or kept after it finished.
type live struct {
	id          taskreg.ID
	name        string
	description string
	spec        Spec
	ag          *coreagent.Agent
	tr          *tracker
	running     bool       // guarded by Tool.mu; true from a (re)start until its run is over
	ws          *Workspace // its own folder (isolation "worktree"), or nil
	wsGone      bool       // guarded by Tool.mu; ws was removed at the end of a run
}

var _ tool.Tool = (*Tool)(nil)

// New returns the Agent tool.
func New(cfg Config) *Tool {
	if cfg.KeepFinished <= 0 {
		cfg.KeepFinished = DefaultKeepFinished
	}
	return &Tool{cfg: cfg, agents: map[string]*live{}}
}

// runningLocked returns the running background agent with task id or name
// key.
func (t *Tool) runningLocked(key string) (*live, bool) {
	lv, ok := t.agents[key]
	if !ok || !lv.running {
		return nil, false
	}
	return lv, true
}

const schema = `{
  "type": "object",
  "properties": {
    "description": {"type": "string", "description": "A short (3-5 word) description of the task"},
    "prompt": {"type": "string", "description": "The task for the agent to perform"},
    "subagent_type": {"type": "string", "description": "The type of specialized agent to use for this task (default general-purpose)"},
    "model": %s,
    "effort": {"type": "string", "enum": ["low", "medium", "high", "xhigh", "max"]},
    "run_in_background": {"type": "boolean", "description": "Run the agent in the background (default: %s); you are notified when it completes"},
    "name": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$", "description": %s},
    "team_name": {"type": "string", "description": "deprecated, ignored"},
    "mode": {"type": "string", "enum": ["acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"], "description": %s},
    "isolation": {"type": "string", "enum": ["worktree", "remote"], "description": "remote runs the agent on a remote worker machine, always in the background, in that worker's own working folder; worktree runs it in its own git worktree (a branch troupe/<team>/<name> from HEAD, in a folder beside the repository), removed at its end when it changed nothing and otherwise kept, with its branch, path and diffstat in the result so that you can merge it"},
    "use_splitpane": {"type": "boolean", "description": "Teammates in tmux only: false puts the teammate in a tmux window of its own instead of a split pane of the shared window (default: the teammateWindow setting, else a split pane)"},
    "labels": {"type": "array", "maxItems": 16, "items": {"type": "string", "pattern": "^[A-Za-z0-9_.-]{1,64}$"}, "description": "Remote agents only (implies isolation remote): run it on a worker that has every one of these labels (such as gpu or linux)"}
  },
  "required": ["description", "prompt"],
  "additionalProperties": false
}`

const description = `Launches a new agent to handle a complex, multi-step task autonomously. The agent starts with a fresh conversation: give it a complete, self-contained prompt (what to do, where, what to report back), since it cannot see yours.

- The agent has your tools except Agent and the team tools.
- In the foreground the call returns when the agent is done, with its final message (which is not shown to the user: summarize it).
- With run_in_background: true the call returns at once with the agent's task id; you are notified with its result when it completes. Use TaskOutput to check on it and TaskStop to stop it. Do not poll it.
- Launch independent agents in parallel with several Agent calls in one message.`

// teammateDescription is added to the description when teammates can be
// spawned.
const teammateDescription = `

Teammates: a call with a name spawns a teammate in your team instead of a sub-agent. It runs on its own (run_in_background does not apply), keeps working after its first prompt, and talks to you and the other members through SendMessage and the shared task list (TaskCreate, TaskList, TaskUpdate). model may be any model id for a teammate. mode "plan" makes it send you its plan for approval before it changes anything. End teammates with a shutdown_request (SendMessage) when their work is done.`

// Spec implements tool.Tool.
func (t *Tool) Spec() llm.ToolSpec {
	def := "foreground"
	if t.cfg.DefaultBackground {
		def = "background"
	}
	model := `{"type": "string", "enum": ["sonnet", "opus", "haiku", "fable"], "description": "Optional model for this agent; it inherits yours when omitted"}`
	name, mode := `"Optional name for the agent"`, `"deprecated, ignored"`
	desc := description
	if t.cfg.Teammates != nil {
		model = `{"type": "string", "description": "Optional model: an alias (sonnet, opus, haiku, fable) or, for a teammate, any model id; it inherits yours when omitted"}`
		name = `"With a name, the agent joins your team as a teammate (the name other members address it by); without one it is an ordinary sub-agent"`
		mode = `"Permission mode of a teammate (inherits yours when omitted); plan makes it submit a plan for your approval before it changes anything"`
		desc += teammateDescription
	}
	if t.cfg.Fork {
		desc += forkDescription
	}
	if len(t.cfg.Agents) > 0 {
		desc += "\n\nAvailable agent types (subagent_type) and the tools they have:"
		for _, a := range t.cfg.Agents {
			tools := "all your tools"
			if a.Tools != nil && !slices.Contains(a.Tools, "*") {
				tools = strings.Join(a.Tools, ", ")
			}
			desc += fmt.Sprintf("\n- %s: %s (Tools: %s)", a.Name, strings.Join(strings.Fields(a.Description), " "), tools)
		}
	}
	return llm.ToolSpec{Name: "Agent", Description: desc, InputSchema: json.RawMessage(fmt.Sprintf(schema, model, def, name, mode))}
}

// ReadOnly implements tool.Tool: a sub-agent may change anything.
func (*Tool) ReadOnly(json.RawMessage) bool { return false }

type input struct {
	Description     string   `json:"description"`
	Prompt          string   `json:"prompt"`
	SubagentType    string   `json:"subagent_type"`
	Model           string   `json:"model"`
	Effort          string   `json:"effort"`
	RunInBackground *bool    `json:"run_in_background"`
	Name            string   `json:"name"`
	TeamName        string   `json:"team_name"`
	Mode            string   `json:"mode"`
	Isolation       string   `json:"isolation"`
	Labels          []string `json:"labels"`
	UseSplitpane    *bool    `json:"use_splitpane"`
}

var (
	namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
	models      = []string{"sonnet", "opus", "haiku", "fable"}
	efforts     = []string{"low", "medium", "high", "xhigh", "max"}
	modes       = []string{"acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"}
)

// check validates in; the error Result names the field. A teammate call
// may name any model id (checkTeammate checks it).
func (t *Tool) check(in *input, teammate bool) (tool.Result, bool) {
	in.Description, in.Prompt = strings.TrimSpace(in.Description), strings.TrimSpace(in.Prompt)
	in.SubagentType = strings.TrimSpace(in.SubagentType)
	if in.SubagentType == "" {
		in.SubagentType = DefaultType
	}
	enum := func(field, v string, allowed []string) (tool.Result, bool) {
		if v != "" && !slices.Contains(allowed, v) {
			return tool.Errorf("Agent: invalid input: %s %q is not one of %s", field, v, strings.Join(allowed, ", ")), false
		}
		return tool.Result{}, true
	}
	switch {
	case in.Description == "":
		return tool.Errorf("Agent: invalid input: description is required (a short 3-5 word label of the task)"), false
	case in.Prompt == "":
		return tool.Errorf("Agent: invalid input: prompt is required (the task for the agent)"), false
	case in.Name != "" && !namePattern.MatchString(in.Name):
		return tool.Errorf("Agent: invalid input: name %q must match %s", in.Name, namePattern), false
	case in.Isolation == "remote" && t.cfg.Remote == nil:
		return tool.Errorf("Agent: isolation \"remote\" needs remote workers, which this session has none of: run it with --store nats://HOST:4222 and start `troupe worker --store nats://HOST:4222` on the machines that should run agents; or omit isolation to run the agent here"), false
	case in.Isolation == "worktree" && t.cfg.Worktrees == nil && !teammate:
		return tool.Errorf("Agent: isolation \"worktree\" is not available in this session; omit it"), false
	case in.Isolation != "" && in.Isolation != "remote" && in.Isolation != "worktree":
		return tool.Errorf("Agent: isolation %q is not supported; use worktree or remote, or omit it", in.Isolation), false
	case len(t.cfg.Types) > 0 && !slices.Contains(t.cfg.Types, in.SubagentType):
		return tool.Errorf("Agent: invalid input: subagent_type %q is unknown; available: %s", in.SubagentType, strings.Join(t.cfg.Types, ", ")), false
	}
	if _, ok := t.resolve(in.SubagentType); !ok {
		return tool.Errorf("Agent: invalid input: subagent_type %q is unknown; available: %s", in.SubagentType, strings.Join(t.names(), ", ")), false
	}
	for _, e := range []struct {
		field, v string
		allowed  []string
	}{{"model", in.Model, models}, {"effort", in.Effort, efforts}, {"mode", in.Mode, modes}} {
		if e.field == "model" && teammate {
			continue
		}
		if res, ok := enum(e.field, e.v, e.allowed); !ok {
			return res, false
		}
	}
	return tool.Result{}, true
}

// Run implements tool.Tool. It returns a Go error only when ctx ends.
func (t *Tool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in input
	if res, ok := tool.Decode("Agent", call.Input, &in); !ok {
		return res, nil
	}
	if res, refused := refuseFork(ctx); refused {
		return res, nil
	}
	if res, ok := checkLabels(&in); !ok {
		return res, nil
	}
	teammate := in.Name != "" && t.cfg.Teammates != nil && in.Isolation != "remote"
	forking := t.cfg.Fork && strings.TrimSpace(in.SubagentType) == "" && !teammate && in.Isolation == ""
	if res, ok := t.check(&in, teammate); !ok {
		return res, nil
	}
	if forking {
		if res, forked, err := t.fork(ctx, call, in); forked {
			return res, err
		}
	}
	if in.Isolation == "remote" {
		return t.runRemote(ctx, call, in)
	}
	if teammate {
		return t.spawnTeammate(ctx, in)
	}
	if t.cfg.Factory == nil {
		return tool.Errorf("Agent: sub-agents are not available in this session"), nil
	}
	bg := t.cfg.DefaultBackground
	if in.RunInBackground != nil {
		bg = *in.RunInBackground
	}
	if bg && t.cfg.Registry == nil {
		return tool.Errorf("Agent: run_in_background is not available in this session; run the agent in the foreground (run_in_background: false)"), nil
	}
	id := taskreg.NewID(taskreg.LocalAgent)
	if bg && in.Name != "" {
		t.mu.Lock()
		_, taken := t.runningLocked(in.Name)
		t.mu.Unlock()
		if taken {
			return tool.Errorf("Agent: invalid input: name %q is already used by a running agent", in.Name), nil
		}
	}
	var ws *Workspace
	if in.Isolation == "worktree" {
		name := in.Name
		if name == "" {
			name = string(id)
		}
		w, err := t.cfg.Worktrees.Isolate(ctx, name)
		if err != nil {
			if ctx.Err() != nil {
				return tool.Result{}, context.Cause(ctx)
			}
			return tool.Errorf("Agent: isolation \"worktree\": %v", err), nil
		}
		ws = &w
	}
	def, _ := t.resolve(in.SubagentType) // check resolved it
	if in.Model == "" {
		in.Model = def.Model
	}
	spec := Spec{AgentID: string(id), Type: in.SubagentType, Model: in.Model, Name: in.Name,
		Description: in.Description, Prompt: in.Prompt, Background: bg,
		Tools: ToolsFor(FilterTools(t.cfg.Tools, t.cfg.Deny), def), Agent: def}
	if ws != nil {
		spec.Dir = ws.Dir
	}
	if bg {
		allow := t.cfg.AsyncAllow
		if allow == nil {
			allow = AsyncAllowed
		}
		spec.Tools = spec.Tools.Filter(func(name string, _ tool.Tool) bool {
			return strings.HasPrefix(name, MCPPrefix) || slices.Contains(allow, name)
		})
	}
	cfg, err := t.cfg.Factory(ctx, spec)
	if err != nil {
		ws.end(ctx)
		if ctx.Err() != nil {
			return tool.Result{}, context.Cause(ctx)
		}
		if errors.Is(err, ErrUnknownType) {
			return tool.Errorf("Agent: invalid input: subagent_type %q: %v", in.SubagentType, err), nil
		}
		return tool.Errorf("Agent: could not create the agent: %v", err), nil
	}
	tr := &tracker{}
	if bg {
		tr.update = func(u taskreg.Usage) {
			t.cfg.Registry.Update(id, func(s taskreg.State) taskreg.State {
				if d, ok := s.Detail.(*taskreg.Agent); ok && d.Usage != u {
					s.Detail = d.With(func(c *taskreg.Agent) { c.Usage = u })
				}
				return s
			})
		}
	}
	prev := cfg.OnEvent
	cfg.OnEvent = func(e coreagent.Event) {
		if prev != nil {
			prev(e)
		}
		tr.observe(e)
	}
	ag, err := coreagent.New(cfg)
	if err != nil {
		ws.end(ctx)
		return tool.Errorf("Agent: could not create the agent: %v", err), nil
	}
	if bg {
		return t.background(call, id, in, spec, ag, tr, ws)
	}
	return t.foreground(ctx, id, in, ag, tr, ws)
}

// foreground runs ag to completion and returns its final text.
func (t *Tool) foreground(ctx context.Context, id taskreg.ID, in input, ag *coreagent.Agent, tr *tracker, ws *Workspace) (tool.Result, error) {
	res, err := ag.Run(ctx, in.Prompt)
	ag.Kill()
	if t.cfg.Registry != nil {
		t.cfg.Registry.KillForAgent(context.WithoutCancel(ctx), string(id))
	}
	note, _ := ws.end(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, context.Cause(ctx)
		}
		return tool.Errorf("%s", withNote(fmt.Sprintf("Agent %q (%s) failed: %v", in.Description, id, err), note)), nil
	}
	text := strings.TrimSpace(res.Text)
	if text == "" {
		text = "(the agent ended without a final message)"
	}
	if res.StopReason == coreagent.StopMaxTurns {
		text += "\n\n[The agent stopped at its turn limit before finishing.]"
	}
	u := tr.usage(res.Duration)
	return tool.Result{Content: fmt.Sprintf("%s\n\nagentId: %s\n<usage>total_tokens: %d\ntool_uses: %d\nduration_ms: %d</usage>",
		withNote(text, note), id, u.TotalTokens, u.ToolUses, u.Duration.Milliseconds())}, nil
}

// background registers ag as a local_agent task and runs it.
func (t *Tool) background(call tool.Call, id taskreg.ID, in input, spec Spec, ag *coreagent.Agent, tr *tracker, ws *Workspace) (tool.Result, error) {
	lv := &live{id: id, name: in.Name, description: in.Description, spec: spec, ag: ag, tr: tr, running: true, ws: ws}
	t.mu.Lock()
	if _, taken := t.runningLocked(in.Name); in.Name != "" && taken {
		t.mu.Unlock()
		ag.Kill()
		ws.end(context.Background())
		return tool.Errorf("Agent: invalid input: name %q is already used by a running agent", in.Name), nil
	}
	t.agents[string(id)] = lv
	if in.Name != "" {
		t.agents[in.Name] = lv // a finished agent of that name stays reachable by its id
	}
	t.mu.Unlock()
	if err := t.launch(lv, call.ID, in.Prompt); err != nil {
		t.mu.Lock()
		t.forgetLocked(lv)
		t.mu.Unlock()
		ag.Kill()
		ws.end(context.Background())
		return tool.Errorf("Agent: could not start the background agent: %v", err), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Async agent launched successfully.\nagentId: %s (task id; use it with TaskOutput and TaskStop", id)
	if in.Name != "" {
		fmt.Fprintf(&b, "; name: %s", in.Name)
	}
	b.WriteString(")\nThe agent is working in the background. You will be notified automatically with its result when it completes: do not poll it and do not duplicate its work. Continue with other work or end your turn.")
	return tool.Result{Content: b.String()}, nil
}

// launch runs lv's agent on prompt as the running local_agent task lv.id
// (re-registered when it exists: a resume keeps the task's UI state). The
// task's end notifies the model once. lv must be marked running.
func (t *Tool) launch(lv *live, toolUseID, prompt string) error {
	reg := t.cfg.Registry
	st := taskreg.State{ID: lv.id, Type: taskreg.LocalAgent, Description: lv.description, ToolUseID: toolUseID,
		Detail: &taskreg.Agent{AgentID: string(lv.id), Prompt: prompt, AgentType: lv.spec.Type, Model: lv.spec.Model}}
	_, err := reg.Go(st, func(ctx context.Context, id taskreg.ID) taskreg.Outcome {
		res, err := lv.ag.Run(ctx, prompt)
		dur := res.Duration
		// A message sent as the run was ending waits in the queue: run
		// again to deliver it before reporting the end.
		for err == nil && !res.Interrupted && res.StopReason != coreagent.StopMaxTurns && !t.park(lv, false) {
			res, err = lv.ag.Run(ctx, "")
			dur += res.Duration
		}
		if err != nil || res.Interrupted || res.StopReason == coreagent.StopMaxTurns {
			t.park(lv, true)
		}
		reg.KillForAgent(context.WithoutCancel(ctx), string(id))
		note, gone := lv.ws.end(ctx)
		if gone {
			t.mu.Lock()
			lv.wsGone = true
			t.mu.Unlock()
		}
		u := lv.tr.usage(dur)
		if err != nil {
			return taskreg.Outcome{Status: taskreg.Failed, Record: recordAgent(func(c *taskreg.Agent) {
				c.Error, c.Usage = withNote(err.Error(), note), u
			})}
		}
		text := strings.TrimSpace(res.Text)
		if res.StopReason == coreagent.StopMaxTurns {
			text += "\n\n[The agent stopped at its turn limit before finishing.]"
		}
		text = withNote(text, note)
		return taskreg.Outcome{Status: taskreg.Completed, Record: recordAgent(func(c *taskreg.Agent) {
			c.Result, c.Usage, c.Messages = text, u, lv.ag.Messages()
		})}
	})
	return err
}

// park marks lv's run over and keeps lv for a resume, dropping (and
// killing) the oldest finished agents beyond Config.KeepFinished. Unless
// force, it does nothing and reports false while messages wait for lv:
// Send queues under the same lock, so none is left behind.
func (t *Tool) park(lv *live, force bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !force && lv.ag.Pending() > 0 {
		return false
	}
	if !lv.running {
		return true
	}
	lv.running = false
	t.finished = append(t.finished, lv)
	for len(t.finished) > t.cfg.KeepFinished {
		old := t.finished[0]
		t.finished = t.finished[1:]
		t.forgetLocked(old)
		old.ag.Kill()
	}
	return true
}

// forgetLocked removes lv from the agents map and the finished list.
func (t *Tool) forgetLocked(lv *live) {
	for k, v := range t.agents {
		if v == lv {
			delete(t.agents, k)
		}
	}
	t.finished = slices.DeleteFunc(t.finished, func(x *live) bool { return x == lv })
}

// recordAgent returns a State change applying f to the agent detail.
func recordAgent(f func(*taskreg.Agent)) func(taskreg.State) taskreg.State {
	return func(s taskreg.State) taskreg.State {
		if d, ok := s.Detail.(*taskreg.Agent); ok {
			s.Detail = d.With(f)
		}
		return s
	}
}

// Send queues text for the running background agent with task id or name
// idOrName; it reaches the agent's model at its next tool-round boundary.
// It fails when no such agent is running.
func (t *Tool) Send(idOrName, text string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	lv, ok := t.runningLocked(idOrName)
	if !ok {
		return fmt.Errorf("agent %q: no such running background agent", idOrName)
	}
	lv.ag.Send(text) // under mu: see park
	return nil
}

// Lookup returns the task id of the running background agent with task id
// or name idOrName: the resolver of tool/tasktool's TaskStop and TaskOutput.
func (t *Tool) Lookup(idOrName string) (taskreg.ID, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	lv, ok := t.runningLocked(idOrName)
	if !ok {
		return "", false
	}
	return lv.id, true
}

// tracker follows a sub-agent's events: tool uses and tokens (the latest
// input plus the cumulative output, as the UI counts them).
type tracker struct {
	update func(taskreg.Usage) // nil in the foreground

	mu          sync.Mutex // events of parallel tool calls come from several goroutines
	toolUses    int
	latestInput int64
	output      int64
	start       time.Time
}

func (tr *tracker) observe(e coreagent.Event) {
	tr.mu.Lock()
	if tr.start.IsZero() {
		tr.start = e.At
	}
	switch {
	case e.Type == coreagent.EventToolUse:
		tr.toolUses++
	case e.Type == coreagent.EventAssistant && e.Usage != nil:
		tr.latestInput = e.Usage.TotalInput()
		tr.output += e.Usage.OutputTokens
	default:
		tr.mu.Unlock()
		return
	}
	u := taskreg.Usage{TotalTokens: tr.latestInput + tr.output, ToolUses: tr.toolUses}
	if !e.At.IsZero() {
		u.Duration = e.At.Sub(tr.start)
	}
	update := tr.update
	if update != nil {
		update(u) // under mu: updates reach the registry in order
	}
	tr.mu.Unlock()
}

// usage returns the usage of a finished run: the tracked tokens and tool
// uses, and the run's duration d.
func (tr *tracker) usage(d time.Duration) taskreg.Usage {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return taskreg.Usage{TotalTokens: tr.latestInput + tr.output, ToolUses: tr.toolUses, Duration: d}
}

// reset starts a new count: a resumed agent reports the usage of its new
// run.
func (tr *tracker) reset() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.toolUses, tr.latestInput, tr.output, tr.start = 0, 0, 0, time.Time{}
}

// Remote runs sub-agents on remote workers: the Agent tool's isolation
// "remote".
type Remote interface {
	// SubmitRemote starts the sub-agent as a remote_agent task in the
	// session's task registry and returns the task's id; the task's
	// notification brings the result. An error is shown to the model.
	SubmitRemote(ctx context.Context, r RemoteRequest) (taskreg.ID, error)
}

// RemoteRequest is a sub-agent an Agent call asks a remote worker to run.
type RemoteRequest struct {
	Description, Prompt, Type, Model, ToolUseID string
	// Labels, when set, are what the worker must have (all of them),
	// checked by the tool (letters, digits, '_', '.', '-'; at most
	// MaxLabels, each at most 64 characters, no repeats).
	Labels []string
}

// Limits of a call's labels; package remote holds its jobs to the same.
const (
	MaxLabels   = 16
	maxLabelLen = 64
)

var labelPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// checkLabels validates the labels of in, naming the one at fault, and
// makes a call with labels and no isolation a remote one: labels only
// choose among remote workers.
func checkLabels(in *input) (tool.Result, bool) {
	if len(in.Labels) == 0 {
		in.Labels = nil
		return tool.Result{}, true
	}
	switch in.Isolation {
	case "":
		in.Isolation = "remote"
	case "remote":
	default:
		return tool.Errorf("Agent: invalid input: labels choose a remote worker; they do not go with isolation %q (use isolation \"remote\", or drop the labels)", in.Isolation), false
	}
	if len(in.Labels) > MaxLabels {
		return tool.Errorf("Agent: invalid input: labels: %d given, at most %d", len(in.Labels), MaxLabels), false
	}
	seen := make(map[string]bool, len(in.Labels))
	for i, l := range in.Labels {
		switch {
		case l == "":
			return tool.Errorf("Agent: invalid input: labels[%d] is empty", i), false
		case len(l) > maxLabelLen:
			return tool.Errorf("Agent: invalid input: labels[%d] is %d characters long, at most %d", i, len(l), maxLabelLen), false
		case !labelPattern.MatchString(l):
			return tool.Errorf("Agent: invalid input: labels[%d] %q: a label is letters, digits, '_', '.' and '-' (such as gpu or linux-arm64)", i, l), false
		case seen[l]:
			return tool.Errorf("Agent: invalid input: labels[%d] %q is given twice", i, l), false
		}
		seen[l] = true
	}
	return tool.Result{}, true
}

// runRemote submits the call's sub-agent to a remote worker.
func (t *Tool) runRemote(ctx context.Context, call tool.Call, in input) (tool.Result, error) {
	id, err := t.cfg.Remote.SubmitRemote(ctx, RemoteRequest{Description: in.Description, Prompt: in.Prompt,
		Type: in.SubagentType, Model: in.Model, ToolUseID: call.ID, Labels: in.Labels})
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, context.Cause(ctx)
		}
		return tool.Errorf("Agent: could not submit the remote agent: %v", err), nil
	}
	on := ""
	if len(in.Labels) > 0 {
		on = " (labels: " + strings.Join(in.Labels, ", ") + ")"
	}
	return tool.Result{Content: fmt.Sprintf("Remote agent submitted%s.\nagentId: %s (task id; use it with TaskOutput and TaskStop)\n"+
		"A remote worker runs it in its own working folder, in the background. You will be notified automatically with its result when it completes: do not poll it and do not duplicate its work.", on, id)}, nil
}
