package kit

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/troupe-dev/troupe/tool/agenttool"
	"github.com/troupe-dev/troupe/tool/tasktool"
	"github.com/troupe-dev/troupe/tool/toolsearch"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/coordinator"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/bash"
	"github.com/troupe-dev/troupe/tool/filetool"
	"github.com/troupe-dev/troupe/transcript"
)

// coordinatorSource is the Source of the allow rules coordinator mode
// adds: the lead's tools, and the scratchpad for workers.
const coordinatorSource = "coordinator"

// Coordinator returns the tools and system prompt of a coordinator
// lead (`troupe -p --coordinator`, or TROUPE_COORDINATOR_MODE=1) on o
// (its Approver unused: approver is the coordinator's): Agent
// (workers always in the background; on remote hosts when o.Remote is
// set and the call asks for isolation "remote" or labels), SendMessage,
// TaskStop, and subscribe_pr_activity and unsubscribe_pr_activity
// (prtools.go). Workers
// get the normal tool set minus coordinator.Internal, and the session's
// scratchpad, created beside the task output folder, which they may read
// and write without asking. custom, when set, replaces the system prompt.
// The returned approver is the lead's: approver, plus allow rules for its
// tools, which only start, continue and stop workers (each worker's own
// calls pass the workers' approver) and read a pull request's activity.
//
// Each worker's Write and Edit claim the files they change (see
// claimGuard): while a worker holds a file, another worker's write of it
// is refused naming the holder, and the claims go when the worker ends.
func Coordinator(o ToolOptions, approver *approve.Approver, session, custom string) ([]tool.Tool, string, *approve.Approver, error) {
	cwd, reg, ac := o.Cwd, o.Registry, o.Context
	taskDir, err := task.OutputDir("", ProjectSlug(cwd), session) // the folder newBackground uses
	if err != nil {
		return nil, "", nil, err
	}
	scratch, err := coordinator.Scratchpad(taskDir)
	if err != nil {
		return nil, "", nil, err
	}
	workerApprover := scratchpadApprover(approver, scratch)
	claims := newWorkerClaims(cwd, reg)
	claims.files = FileConfig(cwd, workerApprover)
	newBash := func(agentID string) tool.Tool {
		return bash.New(bash.Config{Dir: cwd,
			Background: tasktool.BashBackground(reg, tasktool.BashOptions{AgentID: agentID, Dir: cwd})})
	}
	var at *agenttool.Tool // set below, before any call
	byName := func(name string) (task.ID, bool) { return at.Lookup(name) }
	stop := tasktool.NewStop(reg, byName)
	workerTools := append(filetool.All(FileConfig(cwd, workerApprover)), newBash(""),
		tasktool.NewOutput(tasktool.Config{Registry: reg, Resolve: byName}), stop)
	workerTools = append(workerTools, webTools(ToolOptions{Model: o.Model, ModelName: o.ModelName, Approver: workerApprover, Context: ac})...) // web.go
	workerTools = append(workerTools, ac.MCPTools()...)                                                                                        // mcp.go
	workerTools = ac.Defer(workerTools)
	parent, err := tool.NewRegistry(workerTools...)
	if err != nil {
		return nil, "", nil, err
	}
	factory := workerFactory(o, newBash, claims, workerApprover, scratch)
	at = agenttool.New(agenttool.Config{Tools: parent, Registry: reg, Deny: coordinator.Internal,
		AsyncAllow: parent.Names(), DefaultBackground: true, Remote: o.Remote, Worktrees: &Worktrees{cwd: cwd, team: CoordinatorWorktrees}, // worktrees.go
		Factory: factory})
	system := custom
	if system == "" {
		system = coordinator.SystemPrompt(coordinator.Context{WorkerTools: agenttool.FilterTools(parent, coordinator.Internal).Names(), Scratchpad: scratch, MCPServers: ac.MCPServers(), Remote: o.Remote != nil})
	}
	lead := releasingAgent{Tool: at, claims: claims}
	out := []tool.Tool{lead, agenttool.NewSendMessage(at), stop}
	if o.Workflows != nil { // workflow.go: workflow agents are workers, made by the same factory
		out = append(out, workflowTool(o, reg, agenttool.FilterTools(parent, coordinator.Internal), nil, factory, &Worktrees{cwd: cwd, team: CoordinatorWorktrees},
			func(id string) { claims.claims.ReleaseAll(id) })) // no task or call to end with: released when the agent's run is over
	}
	out = append(out, PRTools(reg, "", prConfig(o))...) // prtools.go: a pull request's activity wakes the coordinator
	return out, system, WithAllow(approver, coordinator.LeadTools...), nil
}

// workerFactory returns the factory of a coordinator's workers.
func workerFactory(o ToolOptions, newBash func(string) tool.Tool, claims *workerClaims, workerApprover agent.Approver, scratch string) agenttool.Factory {
	reg, model, modelName, ac, tx := o.Registry, o.Model, o.ModelName, o.Context, o.Transcripts
	return func(ctx context.Context, s agenttool.Spec) (agent.Config, error) {
		var ts []tool.Tool
		for _, name := range s.Tools.Names() {
			t, _ := s.Tools.Get(name)
			switch name {
			case "Bash":
				t = tool.DeferredLike(newBash(s.AgentID), t) // its background shells end with the worker
			case "Write", "Edit":
				t = tool.DeferredLike(claims.tool(name, coordinator.Worker{ID: s.AgentID, Description: s.Description}), t)
			}
			ts = append(ts, t)
		}
		tools, err := tool.NewRegistry(toolsearch.Ensure(ts)...)
		if err != nil {
			return agent.Config{}, err
		}
		ap := agent.Approver(workerApprover)
		if s.Dir != "" { // its own worktree: alone there, so no other worker's claims can meet its own
			if tools, ap, err = toolsIn(s.Dir, tools, ap, reg, s.AgentID); err != nil {
				return agent.Config{}, err
			}
		}
		ap = underParent(ap, o.ParentMode) // never wider than the coordinator is now
		if !s.Background {
			claims.foreground(ctx, s.AgentID)
		}
		cfg := agent.Config{Model: model, ModelName: modelName, Tools: tools, Approver: ap,
			System: coordinator.WorkerSystem(s.Type, scratch)}
		if ac != nil { // the project instructions and the environment, as every agent
			cfg.System = brief.Build(cfg.System, ac.instr, "").Stable
			cfg.Environment = ac.Environment
			cfg.Hooks = ac.hooks.ForAgent(string(s.AgentID), true)
		}
		if s.Dir != "" {
			cfg.System += WorktreeNote(s.Dir)
		}
		if w := tx.Writer(string(s.AgentID), transcript.KindWorker, transcript.KindLead); w != nil {
			cfg.Transcript = w
		}
		return cfg, nil
	}
}

// workerClaims enforces one writer per file among a coordinator's
// workers: each worker's Write and Edit claim the file before changing it.
// A background worker's claims are released when its task ends (completed,
// failed or killed), a foreground worker's when its Agent call returns.
type workerClaims struct {
	claims coordinator.Claims
	cwd    string // the working folder with its links resolved, for messages
	reg    *task.Registry
	root   string          // the tools' root
	files  filetool.Config // the file tools' Confine and Withhold (set before use)
}

// newWorkerClaims returns the claims of a session whose tasks are in reg,
// and starts their release on task ends; it stops when reg is closed.
func newWorkerClaims(cwd string, reg *task.Registry) *workerClaims {
	c := &workerClaims{cwd: cwd, reg: reg, root: cwd}
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		c.cwd = real
	}
	sub := reg.Subscribe() // before any worker runs: no end is missed
	go func() {
		defer sub.Close()
		for {
			e, err := sub.Next(context.Background())
			if err != nil {
				return // the registry is closed
			}
			if e.Kind == task.EventTerminated && e.State.Type == task.LocalAgent && c.ended(string(e.State.ID)) {
				c.claims.ReleaseAll(string(e.State.ID))
			}
		}
	}()
	return c
}

// ended reports whether the worker id's task has ended and has not been
// resumed since (SendMessage runs a finished worker again under its id).
func (c *workerClaims) ended(id string) bool {
	s, ok := c.reg.Get(task.ID(id))
	return ok && !s.Status.Active()
}

// tool returns the Write or Edit tool of worker w, guarded by its claims.
func (c *workerClaims) tool(name string, w coordinator.Worker) tool.Tool {
	cfg := c.files
	cfg.Root, cfg.Guard = c.root, func(_ context.Context, path string) error { return c.claim(w, path) }
	if name == "Edit" {
		return filetool.NewEdit(cfg)
	}
	return filetool.NewWrite(cfg)
}

// claim claims path for w. A holder whose task has ended loses its claims
// here even when the release on its end has not run yet, so a worker the
// coordinator starts on an end notification always finds the files free.
// The refusal names the path relative to the working folder.
func (c *workerClaims) claim(w coordinator.Worker, path string) error {
	key, err := coordinator.ClaimPath(path)
	if err != nil {
		return err
	}
	err = c.claims.Claim(w, key)
	var ce *coordinator.ClaimedError
	if errors.As(err, &ce) && c.ended(ce.Holder.ID) {
		c.claims.ReleaseAll(ce.Holder.ID)
		err = c.claims.Claim(w, key)
	}
	if errors.As(err, &ce) {
		if rel, rerr := filepath.Rel(c.cwd, ce.Path); rerr == nil && filepath.IsLocal(rel) {
			return &coordinator.ClaimedError{Path: rel, Holder: ce.Holder}
		}
	}
	return err
}

// foregroundKey is the context key of the slot where the factory records
// a foreground worker's id for releasingAgent.
type foregroundKey struct{}

// foreground records id as the foreground worker of the Agent call whose
// context is ctx.
func (c *workerClaims) foreground(ctx context.Context, id string) {
	if slot, ok := ctx.Value(foregroundKey{}).(*string); ok {
		*slot = id
	}
}

// releasingAgent is the coordinator's Agent tool: a foreground worker
// (run_in_background false) has no task, so its claims are released when
// its call returns, however it ended.
type releasingAgent struct {
	*agenttool.Tool
	claims *workerClaims
}

// Run implements tool.Tool.
func (r releasingAgent) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var id string // set by the factory, in this goroutine, for a foreground worker
	defer func() {
		if id != "" {
			r.claims.claims.ReleaseAll(id)
		}
	}()
	return r.Tool.Run(context.WithValue(ctx, foregroundKey{}, &id), call)
}

// WithAllow returns a copy of ap (nil stays nil) whose policy also allows
// the rules given (valid rule texts). They are allow rules, so deny and
// ask rules, plan mode and dontAsk still win; nothing else changes.
func WithAllow(ap *approve.Approver, rules ...string) *approve.Approver {
	if ap == nil {
		return nil
	}
	w := *ap
	w.Policy.Allow = append([]permission.Rule(nil), ap.Policy.Allow...)
	for _, text := range rules {
		r, err := permission.ParseRule(text)
		if err != nil {
			continue // such as a path no rule can name: the call is asked as usual
		}
		r.Source = coordinatorSource
		w.Policy.Allow = append(w.Policy.Allow, r)
	}
	return &w
}

// scratchpadApprover returns a copy of ap that also allows reading and
// editing below the scratchpad folder.
func scratchpadApprover(ap *approve.Approver, scratch string) *approve.Approver {
	// "//" anchors an absolute path; Edit rules cover Write and Edit, Read
	// rules Read, Glob and Grep.
	pat := "(/" + filepath.ToSlash(scratch) + "/**)"
	return WithAllow(ap, "Read"+pat, "Edit"+pat)
}
