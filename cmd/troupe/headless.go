package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/cli/agentflags"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/coordinator"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/endpoint"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/schedule"
	"github.com/troupe-dev/troupe/session"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/session/record"
	"github.com/troupe-dev/troupe/session/streamjson"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/transcript"
)

// headless holds the flags of `troupe -p`.
type headless struct {
	print        bool
	outputFormat string
	model        agentflags.Model // --provider, --model, --script
	maxTurns     int
	cwd          string
	system       string
	transcript   string
	noInstr      bool // --no-project-instructions
	trust        bool // --trust: trust the working folder (trust.go)

	perm agentflags.Permissions // the permission flags

	coordinator bool // coordinator mode (coordinator.go)

	budget agentflags.Budget // --max-budget-usd, --max-tokens

	teams teamFlags // agent teams (swarm.go)

	workflows workflowFlags // --workflows, --workflow-concurrency (workflows.go)

	session sessionFlags // --resume, --continue (session.go)

	peers peerFlags // --name, --no-peer-messages (peers.go)
	// noResumeHint: the session cannot be resumed (the demo's home goes
	// with it), so the interactive lead does not say how.
	noResumeHint bool

	maxWakeups int // --max-wakeups (schedule.go)

	// noAltScreen: the interactive lead keeps the conversation in the
	// terminal's scrollback (--no-alt-screen, or the setting altScreen
	// false).
	noAltScreen bool
}

// addHeadlessFlags puts the flags of the headless mode on the root.
func (a *app) addHeadlessFlags(root *cobra.Command, h *headless) {
	f := root.Flags()
	f.BoolVarP(&h.print, "print", "p", false, "run one agent headless on the prompt (the arguments, or stdin) and print the result")
	f.StringVar(&h.outputFormat, "output-format", "text", "with -p: `text`, json (one result object) or stream-json (one event a line)")
	h.model.Add(f)
	f.IntVar(&h.maxTurns, "max-turns", agent.DefaultMaxTurns, "bound on model calls in one run")
	f.StringVar(&h.cwd, "cwd", "", "working `DIR` for the agent's tools (default: the current folder)")
	f.StringVar(&h.system, "system-prompt", "", "replace the default system prompt (project instructions and the environment still follow it)")
	f.BoolVar(&h.noInstr, "no-project-instructions", false, "do not give agents the CLAUDE.md and AGENTS.md files of the working folder, the folders above it and the user's home")
	f.BoolVar(&h.trust, "trust", false, "trust the working folder, as troupe trust DIR does (recorded), and run; without it troupe -p refuses a folder not trusted yet, and the interactive lead asks")
	f.BoolVar(&h.noAltScreen, "no-alt-screen", false, "interactive lead: keep the conversation in the terminal's own scrollback (to search and select it) instead of the alternate screen; also the setting altScreen: false")
	f.StringVar(&h.transcript, "transcript", "", "append the run's events as JSON lines to `FILE`")
	h.perm.Add(f, "with -p: ", true)
	a.addTeamFlags(root, &h.teams)
	h.budget.Add(f)
	addWorkflowFlags(f, &h.workflows)
	addSessionFlags(f, &h.session)
	addPeerFlags(f, &h.peers)
	addScheduleFlags(f, &h.maxWakeups)
	f.BoolVar(&h.coordinator, "coordinator", false, "with -p: coordinator mode: the agent only directs background workers (Agent, SendMessage, TaskStop); also "+coordinator.EnvMode+"=1 or "+coordinator.EnvClaudeMode+"=1")
}

// runRoot is the root command's action: the headless mode with -p, the
// interactive lead otherwise.
func (a *app) runRoot(cmd *cobra.Command, args []string, h *headless) error {
	if err := h.teams.mate.Validate(); err != nil {
		return err
	}
	if h.teams.mate.Enabled() { // a teammate process (swarm.go)
		return a.runTeammate(cmd, h)
	}
	if err := h.teams.validate(a); err != nil {
		return err
	}
	if !h.print {
		if len(args) > 0 {
			msg := fmt.Sprintf("unknown command %q for \"troupe\"", args[0])
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
			} else {
				msg += fmt.Sprintf(" (to run an agent on a prompt: troupe -p %q)", strings.Join(args, " "))
			}
			return &UsageError{Cmd: "troupe", Err: errors.New(msg)}
		}
		return a.runInteractive(cmd.Context(), h)
	}
	switch h.outputFormat {
	case "text", "json", "stream-json":
	default:
		return cli.Usagef("--output-format %q: want text, json or stream-json", h.outputFormat)
	}
	if h.maxTurns <= 0 {
		return cli.Usagef("--max-turns %d: want a positive number", h.maxTurns)
	}
	prompt := strings.Join(args, " ")
	if strings.TrimSpace(prompt) == "" {
		if isTerminal(a.Stdin) { // reading it would wait for input nobody meant to give
			return cli.Usagef("no prompt: give it as arguments (troupe -p \"...\") or pipe it on stdin")
		}
		b, err := io.ReadAll(io.LimitReader(a.Stdin, mailbox.MaxTextLen+1))
		if err != nil {
			return fmt.Errorf("read the prompt from stdin: %w", err)
		}
		if len(b) > mailbox.MaxTextLen {
			return cli.Usagef("the prompt on stdin is longer than %d bytes", mailbox.MaxTextLen)
		}
		prompt = string(b)
	}
	if strings.TrimSpace(prompt) == "" {
		return cli.Usagef("no prompt: give it as arguments (troupe -p \"...\") or on stdin")
	}
	return a.runHeadless(cmd.Context(), h, prompt)
}

// runHeadless runs the lead of `troupe -p` on prompt (troupe demo too).
func (a *app) runHeadless(ctx context.Context, h *headless, prompt string) error {
	cwd, err := a.WorkDir(h.cwd)
	if err != nil {
		return err
	}
	if err := a.trustGate(ctx, h, cwd, false); err != nil { // trust.go: before anything of the folder is read
		return err
	}
	if prompt, err = a.expandCommand(h, cwd, prompt); err != nil { // context.go: "/name args"
		return err
	}
	if asksForWorkflow(prompt) { // workflows.go: the prompt opts in, as Claude Code's does
		h.workflows.on = true
	}
	lr, err := a.openLead(ctx, h, cwd, false)
	if lr != nil {
		defer lr.close()
	}
	if err != nil {
		return err
	}
	lr.out.Init(cwd, lr.tools)
	lr.hooks.SessionStart(ctx, len(lr.history) > 0, lr.bg.sess.Lead().Send)
	res, runErr := lr.bg.sess.Run(ctx, prompt)
	lr.hooks.SessionEnd(ctx, "other")
	if lr.explain != nil {
		runErr = lr.explain(runErr)
	}
	runErr = lr.budgetEnd(h, runErr) // budget_team.go: teammates asked to shut down leave first
	lr.bg.endTeam(h.teams.keep)
	lr.bg.flush() // every event is printed before the result
	lr.bg.reportUnfinished(a.Stderr)
	// budget.go: a limit reached exits 6
	return agentflags.Exit(a.Stderr, lr.out.Finish(res, runErr))
}

// leadRun is a lead's session made ready to run, for `troupe -p` and the
// interactive lead alike.
type leadRun struct {
	bg      *background
	out     *streamjson.Writer
	rec     *record.Log
	id      string        // the session's id
	tools   []string      // the lead's tool names
	model   string        // the model's name, for the record and the header
	history []llm.Message // the resumed conversation
	mode    string        // the lead's permission mode at the start
	coord   bool
	explain func(error) error // a model server's explanation of a failed run
	hooks   *kit.Hooks        // hooks.go: the settings' hooks, read once
	trace   func(agent.Event) // telemetry.go: OpenTelemetry spans, nil when off
	// presence is the session's entry among the running sessions and
	// its way to them (peers.go).
	presence *kit.Presence
	// spentSync reads what agents outside troupe spent (Claude Code
	// teammates, budget_claude.go) into the meter; nil when none can.
	spentSync func()
	// workflows are the Workflow tool's options, nil when it is off
	// (workflows.go).
	workflows *kit.WorkflowOptions

	// sched holds the cron jobs and the wakeup (schedule.go).
	sched *schedule.Schedule

	mu      sync.Mutex
	closers []func() // run by close, last first
}

func (lr *leadRun) defer_(f func()) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	lr.closers = append(lr.closers, f)
}

func (lr *leadRun) close() {
	lr.mu.Lock()
	cs := lr.closers
	lr.closers = nil
	lr.mu.Unlock()
	for i := len(cs) - 1; i >= 0; i-- {
		cs[i]()
	}
}

// openLead builds the lead of a session in cwd: settings, permissions,
// model, record, tasks, tools, team and the lead agent itself (through a
// factory, so that the session can build a fresh lead when a turn is
// backgrounded). Interactive leads ask the person (session.LeadAsker and
// TeamAnswerer) and print nothing on the terminal; the returned leadRun
// is closed by the caller, also when err is not nil.
func (a *app) openLead(ctx context.Context, h *headless, cwd string, interactive bool) (*leadRun, error) {
	lr := &leadRun{}
	if err := a.settingsCoordinator(h, cwd); err != nil {
		return lr, err
	}
	sess, err := a.openSessions(h, cwd) // session.go: --resume, --continue and the record of the run
	if err != nil {
		return lr, err
	}
	lr.coord = sess.coordinatorMode(h)
	lr.history = sess.history
	// --dangerously-skip-permissions is the lead's too: bypassPermissions.
	mode, err := h.teams.mate.PermissionMode(h.perm.Mode)
	if err != nil {
		return lr, err
	}
	if mode != "" {
		h.perm.Mode = string(mode)
	}
	approver, closeAudit, err := h.perm.Approver(a.App, cwd)
	if err != nil {
		return lr, err
	}
	lr.defer_(closeAudit)
	model, err := h.model.Open(a.Getenv)
	if err != nil {
		return lr, err
	}
	lr.id = sess.id(a.NewID)
	// procs.go: this process's groups recorded, and a dead one's killed;
	// the ledger is closed last, when every agent has stopped.
	closeProcs, err := a.keepProcs("", lr.id)
	lr.defer_(closeProcs)
	if err != nil {
		return lr, err
	}
	if lr.hooks, err = a.openHooks(cwd, lr.id, approver.Audit, a.Stderr); err != nil {
		return lr, err
	}
	approver.PermissionHook = lr.hooks.PermissionHook()
	lr.model = cmp.Or(h.model.Name, model.Info().Model)
	if lr.trace, err = a.leadTelemetry(ctx, lr); err != nil {
		return lr, err
	}
	lr.rec = sess.record(lr.id, cwd, lr.coord, model.Info(), h.model.Name)
	lr.defer_(lr.rec.Close)
	if model, err = a.leadOutput(h, cwd, lr, model, interactive); err != nil {
		return lr, err
	}
	bg, err := newBackground(cwd, lr.id, lr.out, a.Now, interactive)
	if err != nil {
		return lr, err
	}
	lr.bg = bg
	lr.defer_(bg.close)
	if err := a.openPresence(ctx, h, lr, cwd, sessionKind(interactive, lr.coord)); err != nil { // peers.go
		return lr, err
	}
	bg.presence.Store(lr.presence)
	if home, err := a.Home(); err == nil { // old sessions' task outputs go
		if _, warn := sweepTaskOutputs(settings.Files(home, cwd), "", filepath.Dir(bg.dir), a.Now()); warn != "" {
			a.WarnOnce(warn)
		}
	}
	lr.defer_(a.teamMetrics(lr)) // telemetry_jobs.go: task durations and queue depths
	// schedule.go: cron jobs and wakeups, restored on --resume
	if err := a.openSchedule(h, lr, sess.prev, interactive); err != nil {
		return lr, err
	}
	if interactive {
		a.askThePerson(h, lr, approver)
	} else if pc, ok := approver.Asker.(*approve.Command); ok {
		bg.questions = approve.QuestionCommand{Command: pc, Cwd: cwd} // docs/ask.md
	}
	closeRemote, err := a.openRemote(ctx, bg, lr.rec) // remote.go: remote agents when the store is NATS
	if err != nil {
		return lr, err
	}
	lr.defer_(closeRemote)
	closeMCP, err := a.startMCP(ctx, cwd) // mcp.go
	if err != nil {
		return lr, err
	}
	lr.defer_(closeMCP)
	cfg, ac, err := a.leadConfig(h, cwd, lr, model, approver)
	if err != nil {
		return lr, err
	}
	extra, err := lr.transcriptFile(h.transcript)
	if err != nil {
		return lr, err
	}
	if _, err := bg.sess.StartLead(a.leadFactory(lr, cfg, ac.Nested(bg.sess.Deliver), extra), sess.history); err != nil {
		return lr, err
	}
	lr.rec.SetMessages(func() []llm.Message { return bg.sess.Lead().Messages() })
	if err := lr.startSchedule(ctx); err != nil {
		return lr, err
	}
	if bg.team != nil {
		a.reattach(ctx, bg.team.Lead) // procs.go: the team a crashed run of this session left
	}
	a.resumeRemote(ctx, lr, sess.prev) // remote_resume.go: the record's remote jobs, taken up on --resume
	return lr, nil
}

// leadOutput sets up what the run prints (the output format's writer,
// the model server's words for its errors) and meters the lead's model;
// it returns the metered model.
func (a *app) leadOutput(h *headless, cwd string, lr *leadRun, model llm.Model, interactive bool) (llm.Model, error) {
	stdout := a.Stdout
	if interactive {
		stdout = io.Discard // the screen is the interactive lead's
	}
	lr.out = streamjson.New(stdout, h.outputFormat, lr.id, model.Info())
	model, err := a.meterLead(h, cwd, lr, model) // budget.go: every agent of the session is metered
	if err != nil {
		return nil, err
	}
	if ep, hasServer := endpoint.Of(model.Info().Provider, a.Getenv); hasServer {
		lr.out.Endpoint, lr.explain = ep, ep.Explain
		if !interactive {
			lr.out.Progress = a.Stderr
		}
	}
	return model, nil
}

// settingsCoordinator turns coordinator mode on when the settings say
// coordinatorMode and neither the flag nor the variable does.
func (a *app) settingsCoordinator(h *headless, cwd string) error {
	if h.coordinator || a.Getenv(coordinator.EnvMode) != "" || a.Getenv(coordinator.EnvClaudeMode) != "" {
		return nil
	}
	home, err := a.Home()
	if err != nil {
		return err
	}
	on, _, err := settings.Key[bool](settings.Files(home, cwd), "coordinatorMode")
	h.coordinator = on
	return err
}

// askThePerson makes the person at the interactive lead the one who
// answers: the lead's and teammates' permission questions and plans go to
// the session, hook warnings to its timeline, the team's to the screen.
func (a *app) askThePerson(h *headless, lr *leadRun, approver *approve.Approver) {
	sess := lr.bg.sess
	lr.hooks.WarnTo(func(msg string) { // hooks.go: the timeline, not the screen
		sess.TeamEvent(swarm.Event{Time: a.Now(), Agent: team.LeadName, Kind: swarm.EventWarning, Text: msg})
	})
	if approver.Asker == nil {
		approver.Asker = sess.LeadAsker()
	}
	if h.teams.answer == nil {
		h.teams.answer = sess.TeamAnswerer()
	}
	if h.teams.plans == nil {
		h.teams.plans = sess.PlanAnswerer()
	}
	if h.teams.questions == nil {
		h.teams.questions = sess.TeamQuestions()
	}
	lr.bg.questions = sess // the lead's own AskUserQuestion calls
	h.teams.timeline = io.Discard
}

// transcriptFile opens --transcript's file for appending (nil without
// the flag); it is closed with the run.
func (lr *leadRun) transcriptFile(path string) (io.Writer, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--transcript: %w", err)
	}
	lr.defer_(func() { f.Close() })
	return f, nil
}

// leadConfig builds the lead agent's configuration: its context (the
// project instructions, skills, memory), its tools and system prompt, as
// a coordinator or as a lead with or without a team, and its approver.
func (a *app) leadConfig(h *headless, cwd string, lr *leadRun, model llm.Model, approver *approve.Approver) (agent.Config, *kit.Context, error) {
	bg := lr.bg
	var toolList []tool.Tool
	var err error
	ac := a.newAgentContext(cwd, lr.model, h.noInstr, approver) // context.go
	bg.ac = ac
	bg.tx = a.transcriptsFor(lr.id)
	if !lr.coord {
		a.autoDream(cwd, lr.id, h, bg.reg) // dream.go: when the autoDream setting is on and a dream is due
	}
	var system string
	wf, err := a.workflowOptions(h, cwd, lr) // workflows.go: the Workflow tool when opted in
	if err != nil {
		return agent.Config{}, nil, err
	}
	lr.workflows = wf
	if lr.coord { // coordinator mode (coordinator.go): its own tools and prompt
		if toolList, system, approver, err = kit.Coordinator(kit.ToolOptions{Cwd: cwd, Registry: bg.reg, Model: model, ModelName: h.model.Name, Context: ac, Transcripts: bg.tx, Remote: bg.remote, ParentMode: bg.sess.Mode, Workflows: wf}, approver, lr.id, h.system); err != nil {
			return agent.Config{}, nil, err
		}
		system = brief.Build(system, ac.Instructions(), "").Stable
	} else {
		if toolList, approver, err = a.leadTools(h, cwd, lr.id, model, approver, bg, wf); err != nil { // swarm.go: teams when enabled
			return agent.Config{}, nil, err
		}
		toolList, approver = lr.scheduleTools(toolList, approver) // schedule.go: CronCreate, ScheduleWakeup
		vars := brief.Vars{Teams: a.teamsEnabled(h.teams.enabled)}
		if vars.Teams {
			if vars.ExplicitTeams, err = a.explicitTeams(h, cwd); err != nil { // swarm.go
				return agent.Config{}, nil, err
			}
		}
		if system, err = ac.System(brief.RoleLead, vars, h.system); err != nil {
			return agent.Config{}, nil, err
		}
	}
	if lr.presence != nil { // peers.go: other sessions, and ListAgents
		toolList = kit.Addressable(toolList, lr.addressing())
		approver = kit.WithAllow(approver, "ListAgents")
	}
	toolList = ac.Defer(toolList) // the built-ins the toolSearch setting defers, the session and team tools too
	if bg.wd != nil {             // EnterWorktree moves the lead's folder tools (kit.Workdir)
		toolList = bg.wd.Follow(toolList)
	}
	tools, err := tool.NewRegistry(toolList...)
	if err != nil {
		return agent.Config{}, nil, err
	}
	lr.tools = tools.Names()
	if t, ok := tools.Get("Agent"); ok {
		// A sub-agent's (a worker's) shells report to it while it runs
		// (agenttool.Tool.Send; the coordinator's Agent tool wraps one).
		if at, ok := t.(interface{ Send(id, text string) error }); ok {
			bg.sess.SetRouter(func(id, text string) bool { return at.Send(id, text) == nil })
		}
	}
	leadApprover := swarm.NewApprover(approver) // its mode may change (session.SetMode)
	bg.sess.SetApprover(leadApprover)
	if bg.wd != nil {
		bg.wd.SetApprover(leadApprover) // and its folder (EnterWorktree)
	}
	lr.mode = string(leadApprover.Mode())
	cfg := agent.Config{Model: model, ModelName: h.model.Name, System: system, Environment: ac.Environment, Tools: tools,
		Attach: ac.OutputDigest(bg.reg, ""), MaxTurns: h.maxTurns, Now: a.Now, Approver: leadApprover, Hooks: lr.hooks.ForAgent(transcript.KindLead, false)}
	lr.hooks.SetMode(func() string { return string(leadApprover.Mode()) })
	cfg, err = ac.NarrowBySkills(cfg) // a skill's allowed-tools narrow the rest of its turn
	return cfg, ac, err
}

// leadFactory returns the session's LeadFactory: lead agents on cfg, each
// with its own transcript (lead, then lead-2, lead-3 for the fresh leads
// of backgrounded turns), recording the foreground lead's conversation.
func (a *app) leadFactory(lr *leadRun, cfg agent.Config, nested func(agent.Event), extra io.Writer) session.LeadFactory {
	var made atomic.Int32
	return func(history []llm.Message, observe func(agent.Event) bool) (*agent.Agent, error) {
		c := cfg
		c.History = history
		if n := lr.bg.sess.Model(); n != "" { // /model NAME (session.Session.SetModel)
			c.ModelName = n
		}
		c.OnEvent = func(e agent.Event) {
			if observe(e) {
				lr.rec.Event(e)
			}
			if lr.trace != nil {
				lr.trace(e)
			}
			nested(e)
		}
		name := transcript.KindLead
		if n := made.Add(1); n > 1 {
			name = fmt.Sprintf("%s-%d", transcript.KindLead, n)
		}
		var tws []io.Writer
		if w := lr.bg.tx.Writer(name, transcript.KindLead, ""); w != nil {
			tws = append(tws, w)
		}
		if extra != nil {
			tws = append(tws, extra)
		}
		if len(tws) > 0 {
			c.Transcript = io.MultiWriter(tws...)
		}
		ag, err := agent.New(c)
		if err != nil {
			return nil, err
		}
		lr.defer_(ag.Kill)
		return ag, nil
	}
}
