package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"

	agenttool "github.com/troupe-dev/troupe/tool/agent"
	teamtool "github.com/troupe-dev/troupe/tool/team"
)

// EnvAgentTeams turns agent teams on for `troupe -p` (as --agent-teams
// does); Claude Code's variable is honoured too.
const (
	EnvAgentTeams       = "TROUPE_AGENT_TEAMS"
	EnvClaudeAgentTeams = "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS"
)

// teamsEnabled reports whether agent teams are on.
func (a *app) teamsEnabled(flag bool) bool {
	if flag {
		return true
	}
	for _, k := range []string{EnvAgentTeams, EnvClaudeAgentTeams} {
		switch strings.ToLower(strings.TrimSpace(a.Getenv(k))) {
		case "1", "true", "yes", "on":
			return true
		}
	}
	return false
}

// memberBuild is what building a teammate's agent needs, in either
// process: the lead's (in-process teammates) or its own (pane teammates).
type memberBuild struct {
	stores  Stores
	team    string
	member  team.Member
	cwd     string
	model   llm.Model
	base    *approve.Approver // the permission layer the teammate starts from
	asker   approve.Asker     // where its questions go
	prompt  string
	planned bool
	now     func() time.Time
	onEvent func(swarm.Event)
	trust   func(mailbox.Message) bool
	// askTimeout bounds the wait for the lead's answers (0: the default).
	askTimeout time.Duration
	// rules receives the teammate's Approver.AddAllowRules (the lead's
	// team-wide "allow always" rules, for in-process teammates).
	rules func(add func([]string))
	// onAgentEvent sees the teammate's agent events (stream-json, logs).
	onAgentEvent func(agent.Event)
}

// teammateSystem is a teammate's system prompt.
func teammateSystem(name, teamName, cwd string, planned bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, `You are teammate %s in the agent team %q, working in %s.
You work alongside other agents on a shared task list. Your plain text output is seen by nobody: to tell the team lead or a teammate something, use SendMessage (to "team-lead", to a teammate's name, or "*" for everyone). Use TaskList and TaskGet to see the shared tasks, and TaskUpdate to take one (owner: your name, status in_progress) and to mark it completed when it is done. When you finish your work, send the team lead a short report.
Messages from others arrive as <teammate-message> blocks; they are requests from peers, not from the user.`, name, teamName, cwd)
	if planned {
		b.WriteString("\nYou are in plan mode: you may only read and explore. Write your plan and submit it with ExitPlanMode; the team lead approves it (you then carry it out) or rejects it with feedback (revise and resubmit).")
	}
	return b.String()
}

// buildTeammate returns a teammate ready to Run, and the cleanup to call
// after it ends (stops its background tasks).
func buildTeammate(p memberBuild) (*swarm.Teammate, func(), error) {
	dir, err := task.OutputDir("", projectSlug(p.cwd), p.team+"-"+p.member.Name+"-"+mailbox.NewID()[:8])
	if err != nil {
		return nil, nil, err
	}
	reg := task.New(task.Config{Dir: dir})
	cleanup := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		reg.Close(ctx)
	}
	base := *p.base
	base.Agent = p.member.Name
	base.Asker = p.asker
	base.Hint = nil
	if p.member.Mode != "" {
		if mode, err := permission.ParseMode(p.member.Mode); err == nil {
			base.Mode = mode
		}
	}
	if p.planned {
		base.Mode = permission.ModePlan
	}
	appr := swarm.NewApprover(&base)
	if cfg, err := p.stores.Teams.Get(context.Background(), p.team); err == nil {
		_ = appr.AddAllowRules(swarm.TeamRules(cfg.TeamAllowedPaths))
	}
	if p.rules != nil {
		p.rules(func(r []string) { _ = appr.AddAllowRules(r) })
	}
	self := teamtool.Self{Team: p.team, Name: p.member.Name, Color: p.member.Color, PaneID: p.member.TmuxPaneID, Backend: p.member.BackendType}
	tm, err := swarm.NewTeammate(swarm.TeammateConfig{
		Team: p.team, Name: p.member.Name, Color: p.member.Color, PaneID: p.member.TmuxPaneID, Backend: p.member.BackendType,
		Teams: p.stores.Teams, Mail: p.stores.Mail, Tasks: p.stores.Tasks,
		Prompt: p.prompt, PlanMode: p.planned, Trust: p.trust, Now: p.now, OnEvent: p.onEvent, AskTimeout: p.askTimeout,
		SetMode:       func(m string) { _ = appr.SetMode(m) },
		AddAllowRules: func(r []string) { _ = appr.AddAllowRules(r) },
		Build: func(tm *swarm.Teammate) (agent.Config, error) {
			core, subSend := coreTools(toolOptions{cwd: p.cwd, reg: reg, model: p.model, modelName: p.member.Model, approver: appr})
			tt := teamtool.Tools(teamtool.Config{Teams: p.stores.Teams, Mail: p.stores.Mail, Tasks: p.stores.Tasks,
				Self: func() teamtool.Self { return self }, SubAgents: subSend, Now: p.now,
				Hooks: teamtool.Hooks{ShutdownApproved: tm.ShutdownApproved, PlanSubmitted: tm.PlanSubmitted}})
			tools, err := tool.NewRegistry(append(core, tt...)...)
			if err != nil {
				return agent.Config{}, err
			}
			return agent.Config{Model: p.model, ModelName: p.member.Model, Tools: tools, Approver: appr, Now: p.now,
				System: teammateSystem(p.member.Name, p.team, p.cwd, p.planned), OnEvent: p.onAgentEvent}, nil
		}})
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	// The teammate's background tasks report to it, not to the lead.
	sub := reg.Subscribe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			e, err := sub.Next(context.Background())
			if err != nil {
				return
			}
			if e.Notification != "" {
				tm.Notify(systemNotification(e.Notification))
			}
		}
	}()
	return tm, func() { sub.Close(); <-done; cleanup() }, nil
}

// leadTeam is the team runtime of a headless lead.
type leadTeam struct {
	lead   *swarm.Lead
	stores Stores
	close  func()
}

// leadTeamOptions configure newLeadTeam.
type leadTeamOptions struct {
	h        *headless
	cwd      string
	session  string
	model    llm.Model
	approver *approve.Approver
	mode     string // --teammate-mode
	// answer answers teammates' permission questions; nil uses
	// --permission-prompt-command when set, else denies with a reason.
	answer  swarm.Answerer
	onEvent func(swarm.Event)
	deliver func(string)
	// paneArgv returns the command line of a pane teammate.
	paneArgv func(m team.Member, r swarm.SpawnRequest, session string) ([]string, map[string]string, error)
}

// newLeadTeam opens the stores and the backends of a lead.
func (a *app) newLeadTeam(o leadTeamOptions) (*leadTeam, error) {
	sess, err := a.open()
	if err != nil {
		return nil, err
	}
	st := sess.Stores
	closeStores := func() { _ = sess.close() }
	be, fallback, reason, err := a.pickBackend(o.mode)
	if err != nil {
		closeStores()
		return nil, err
	}
	if o.onEvent != nil {
		o.onEvent(swarm.Event{Time: a.Now(), Agent: team.LeadName, Kind: "backend", Text: fmt.Sprintf("teammates run %s (%s)", be.Name(), reason)})
	}
	answer := o.answer
	if pc, ok := o.approver.Asker.(*promptCommand); ok && answer == nil {
		answer = func(ctx context.Context, q swarm.PermissionAsk) (swarm.PermissionAnswer, error) {
			return pc.teamAnswer(ctx, q, o.cwd)
		}
	}
	if answer == nil && o.approver.Asker != nil {
		ask := o.approver.Asker
		answer = func(ctx context.Context, q swarm.PermissionAsk) (swarm.PermissionAnswer, error) {
			ans, err := ask.Ask(ctx, approve.AskRequest{Agent: q.Worker, Tool: q.Tool, ToolUseID: q.ToolUseID, Input: q.Input, Cwd: o.cwd, Reason: q.Description})
			return swarm.PermissionAnswer{Allow: ans.Allow, Message: ans.Message}, err
		}
	}
	settingsFile := filepath.Join(o.cwd, ".troupe", "settings.local.json")
	lt := &leadTeam{stores: st}
	var lead *swarm.Lead
	lead, err = swarm.NewLead(swarm.LeadConfig{
		Teams: st.Teams, Mail: st.Mail, Tasks: st.Tasks,
		Session: o.session, Cwd: o.cwd, Model: o.h.model, Mode: string(o.approver.Mode),
		Backend: be, Fallback: fallback, Answer: answer, Policy: o.approver.Policy, NoAutoClaim: teammateCommand(a, o.h) != "",
		PersistRule: func(rule string) error {
			return settings.AddRule(context.Background(), settingsFile, permission.Allow, rule)
		},
		Deliver: o.deliver, Now: a.Now, OnEvent: o.onEvent,
		Launch: func(ctx context.Context, l *swarm.Lead, m team.Member, r swarm.SpawnRequest, beName string) (backend.Spec, error) {
			if beName != backend.InProcess {
				argv, env, err := o.paneArgv(m, r, o.session)
				return backend.Spec{Argv: argv, Env: env}, err
			}
			m.TmuxPaneID, m.BackendType = backend.InProcess, backend.InProcess
			return backend.Spec{Run: func(ctx context.Context) error {
				tm, cleanup, err := buildTeammate(memberBuild{stores: st, team: l.Team(), member: m, cwd: o.cwd, model: o.model,
					base: o.approver, prompt: r.Prompt, planned: r.PlanModeRequired, now: a.Now, onEvent: o.onEvent, askTimeout: o.h.teams.ask,
					asker: approve.AskerFunc(func(ctx context.Context, req approve.AskRequest) (approve.Answer, error) {
						return l.AskInProcess(ctx, m.Name, m.Color, req)
					}),
					rules:        func(add func([]string)) { l.RegisterRules(m.Name, add) },
					onAgentEvent: toolTimeline(m.Name, a.Now, o.onEvent)})
				if err != nil {
					return err
				}
				defer cleanup()
				return tm.Run(ctx)
			}}, nil
		},
	})
	if err != nil {
		closeStores()
		return nil, err
	}
	lt.lead = lead
	lt.close = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = lead.Close(ctx)
		closeStores()
	}
	return lt, nil
}

// pickBackend detects the teammate backend for mode; in auto mode a pane
// backend has the in-process one as its fallback.
func (a *app) pickBackend(mode string) (be, fallback backend.Backend, reason string, err error) {
	if mode == "" {
		mode = backend.ModeAuto
	}
	name, reason, err := backend.Detect(mode, backend.Env{Getenv: a.Getenv, LookPath: lookPath})
	if err != nil {
		return nil, nil, "", err
	}
	be, err = a.newBackend(name)
	if err != nil {
		if mode != backend.ModeAuto {
			return nil, nil, "", err
		}
		be, reason = newInProcess(), fmt.Sprintf("%s failed (%v); in-process instead", name, err)
	}
	if mode == backend.ModeAuto && be.Name() != backend.InProcess {
		fallback = newInProcess()
	}
	return be, fallback, reason, nil
}

// teamTools returns the lead's team tools: TeamCreate, TeamDelete,
// SendMessage (teammates, then background sub-agents) and the task list.
func teamTools(lt *leadTeam, subSend tool.Tool, now func() time.Time) []tool.Tool {
	return teamtool.Tools(teamtool.Config{Teams: lt.stores.Teams, Mail: lt.stores.Mail, Tasks: lt.stores.Tasks, Lead: lt.lead,
		Self: func() teamtool.Self {
			return teamtool.Self{Team: lt.lead.Team(), Name: team.LeadName, Lead: true}
		},
		SubAgents: subSend, Now: now, Hooks: teamtool.Hooks{PlanDigest: lt.lead.PlanDigest}})
}

// teammates adapts the Lead to the Agent tool's Teammates.
type teammates struct{ lead *swarm.Lead }

func (t teammates) SpawnTeammate(ctx context.Context, r agenttool.TeammateRequest) (agenttool.TeammateInfo, error) {
	info, err := t.lead.Spawn(ctx, swarm.SpawnRequest{Name: r.Name, Description: r.Description, Prompt: r.Prompt,
		Model: r.Model, AgentType: r.AgentType, Mode: r.Mode, PlanModeRequired: r.PlanModeRequired})
	if err != nil {
		return agenttool.TeammateInfo{}, err
	}
	return agenttool.TeammateInfo{AgentID: info.AgentID, Name: info.Name, Team: info.Team, Color: info.Color, Model: info.Model,
		Backend: info.Backend, PaneID: info.PaneID, PlanModeRequired: info.PlanModeRequired}, nil
}

// watchLeadCalls marks the teammates a lead's message goes to as busy,
// so that a headless session does not end before they wake.
func watchLeadCalls(lead *swarm.Lead, e agent.Event) {
	if e.Type != agent.EventToolUse || e.Call == nil || e.Call.Name != "SendMessage" {
		return
	}
	var in struct {
		To string `json:"to"`
	}
	if json.Unmarshal(e.Call.Input, &in) == nil && in.To != "" {
		lead.MarkBusy(in.To)
	}
}

// EnvTeammateCommand is --teammate-command's variable.
const EnvTeammateCommand = "TROUPE_TEAMMATE_COMMAND"

// EnvTeammateBin overrides the binary pane teammates run (default: this
// one); tests and wrappers set it.
const EnvTeammateBin = "TROUPE_TEAMMATE_BIN"

// toolTimeline turns a teammate's tool calls into timeline events.
func toolTimeline(name string, now func() time.Time, on func(swarm.Event)) func(agent.Event) {
	if on == nil {
		return nil
	}
	return func(e agent.Event) {
		if e.Type != agent.EventToolUse || e.Call == nil {
			return
		}
		var in map[string]any
		_ = json.Unmarshal(e.Call.Input, &in)
		detail := ""
		for _, k := range []string{"command", "file_path", "pattern", "to", "taskId"} {
			if v, ok := in[k].(string); ok {
				detail = v
				break
			}
		}
		if e.Call.Name == "TaskUpdate" {
			if st, ok := in["status"].(string); ok {
				detail = "#" + detail + " → " + st
			}
		}
		on(swarm.Event{Time: now(), Agent: name, Kind: "tool", Text: strings.TrimSpace(e.Call.Name + " " + detail)})
	}
}

// selfArgv0 is the troupe binary pane teammates run.
func (a *app) selfArgv0() (string, error) {
	if bin := a.Getenv(EnvTeammateBin); bin != "" {
		return bin, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the troupe binary for pane teammates: %w", err)
	}
	return exe, nil
}

// paneArgv builds a pane teammate's command line: the same binary with
// the teammate flags and what the lead's run was configured with, and
// the provider's environment (a pane does not inherit ours).
func (a *app) paneArgv(h *headless, home, cwd string) func(m team.Member, r swarm.SpawnRequest, session string) ([]string, map[string]string, error) {
	return func(m team.Member, r swarm.SpawnRequest, session string) ([]string, map[string]string, error) {
		if cmd := teammateCommand(a, h); cmd != "" {
			return claudeArgv(a, cmd, home, m, r, session)
		}
		exe, err := a.selfArgv0()
		if err != nil {
			return nil, nil, err
		}
		argv := []string{exe, "--agent-id", m.AgentID, "--agent-name", m.Name, "--team-name", teamOf(m.AgentID),
			"--agent-color", m.Color, "--parent-session-id", session, "--home", home, "--cwd", cwd}
		if r.PlanModeRequired {
			argv = append(argv, "--plan-mode-required")
		}
		if m.Mode != "" {
			argv = append(argv, "--permission-mode", m.Mode)
		}
		if h.provider != "" {
			argv = append(argv, "--provider", h.provider)
		}
		if h.script != "" {
			script, err := filepath.Abs(h.script)
			if err != nil {
				return nil, nil, err
			}
			argv = append(argv, "--script", script)
		}
		if m.Model != "" {
			argv = append(argv, "--model", m.Model)
		}
		if h.teams.ask > 0 && h.teams.ask != swarm.DefaultAskTimeout {
			argv = append(argv, "--permission-answer-timeout", h.teams.ask.String())
		}
		env := map[string]string{EnvAgentTeams: "1"}
		for _, k := range passThroughEnv {
			env[k] = a.Getenv(k) // an unset one masks an ambient value
		}
		// The same store as the lead's (its secrets in the environment,
		// not on the command line).
		senv, err := a.storeEnv()
		if err != nil {
			return nil, nil, err
		}
		for _, kv := range senv {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		return argv, env, nil
	}
}

// passThroughEnv are the variables a pane teammate gets from the lead:
// the providers' endpoints and credentials, proxies and the store root.
var passThroughEnv = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"}

func teamOf(agentID string) string {
	_, t, _ := team.ParseAgentID(agentID)
	return t
}

// teamFlags are the agent-team flags: the lead's, and a teammate
// process's identity (teammate_flags.go).
type teamFlags struct {
	enabled bool
	digest  string // when idle notifications reach the lead
	ask     time.Duration
	command string // the program pane teammates run instead of troupe (claude)
	mate    *teammateFlags

	// Set by troupe demo, not by flags.
	answer   swarm.Answerer    // answers teammates' permission questions
	timeline io.Writer         // where the team's timeline goes (default stderr)
	onEvent  func(swarm.Event) // sees every timeline event
}

// Values of --idle-digest.
const (
	digestNextInput = "next-input"
	digestQuiet     = "quiet"
)

// addTeamFlags puts the lead's agent-team flags on the root.
func (a *app) addTeamFlags(root *cobra.Command, t *teamFlags) {
	f := root.Flags()
	f.BoolVar(&t.enabled, "agent-teams", false, "with -p: let the agent form a team (TeamCreate, teammates through the Agent tool, SendMessage, the shared task list); also "+EnvAgentTeams+"=1")
	f.StringVar(&t.digest, "idle-digest", digestNextInput, "with --agent-teams: when teammates' idle notifications reach the lead, as one digest: "+digestNextInput+" (with its next input, or once the team is quiet) or "+digestQuiet+" (only once the whole team is quiet)")
	f.DurationVar(&t.ask, "permission-answer-timeout", swarm.DefaultAskTimeout, "teammates: how long a permission request waits for the lead's answer before the call is denied")
	f.StringVar(&t.command, "teammate-command", "", "with --agent-teams: run this `PROGRAM` as the pane teammates instead of troupe, with Claude Code's teammate flags (such as claude: a Claude Code teammate; needs a pane backend and the file store); also "+EnvTeammateCommand)
	t.mate = addTeammateFlags(root)
	t.mate.getenv = a.Getenv
}

// leadTools returns the tools of a headless lead: the core tools, and
// with agent teams on the team tools, with the team runtime attached to
// bg (which closes it).
//
// A lead may use the team tools and spawn teammates without asking: they
// only coordinate, and every teammate's own calls pass its permissions.
func (a *app) leadTools(h *headless, cwd, session string, model llm.Model, approver *approve.Approver, bg *background) ([]tool.Tool, *approve.Approver, error) {
	opts := toolOptions{cwd: cwd, reg: bg.reg, model: model, modelName: h.model, approver: approver, remote: bg.remote}
	if !a.teamsEnabled(h.teams.enabled) {
		if h.teams.mate.teammateMode != "" {
			return nil, nil, usagef("--teammate-mode needs agent teams: add --agent-teams (or set %s=1)", EnvAgentTeams)
		}
		tools, sub := coreTools(opts)
		return append(tools, sub), approver, nil
	}
	if cmd := teammateCommand(a, h); cmd != "" {
		if h.teams.mate.teammateMode == backend.ModeInProcess {
			return nil, nil, usagef("--teammate-command %s runs teammates in panes: it needs --teammate-mode tmux, iterm2 or auto inside one", cmd)
		}
		if spec, err := a.storeSpec(); err != nil {
			return nil, nil, err
		} else if spec.url != "" {
			return nil, nil, usagef("--teammate-command %s: Claude Code teammates share the team through files; use the file store, not %s", cmd, spec.url)
		}
	}
	if d := h.teams.digest; d != digestNextInput && d != digestQuiet {
		return nil, nil, usagef("--idle-digest %q: want %s or %s", d, digestNextInput, digestQuiet)
	}
	home, err := a.home()
	if err != nil {
		return nil, nil, err
	}
	mode := h.teams.mate.teammateMode
	if mode == "" {
		if mode, err = settingsTeammateMode(settings.Files(home, cwd)); err != nil {
			return nil, nil, err
		}
	}
	bg.digestQuiet = h.teams.digest == digestQuiet
	lt, err := a.newLeadTeam(leadTeamOptions{h: h, cwd: cwd, session: session, model: model, approver: approver,
		answer: h.teams.answer, mode: mode, onEvent: bg.teamEvent, deliver: bg.deliver, paneArgv: a.paneArgv(h, home, cwd)})
	if err != nil {
		return nil, nil, err
	}
	bg.team, bg.stderr, bg.onTeamEvent = lt, a.Stderr, h.teams.onEvent
	if h.teams.timeline != nil {
		bg.stderr = h.teams.timeline
	}
	opts.teammates = teammates{lt.lead}
	tools, sub := coreTools(opts)
	return append(tools, teamTools(lt, sub, a.Now)...), withAllow(approver, append([]string{"Agent"}, swarm.TeamTools...)...), nil
}

// runTeammate runs this process as a teammate (started with --agent-id,
// --agent-name and --team-name, by a troupe or Claude Code lead in a
// pane): it joins the team in the store, reads its first prompt from its
// inbox, and works until its shutdown is approved or it is stopped.
func (a *app) runTeammate(cmd *cobra.Command, h *headless) error {
	tf := h.teams.mate
	if a.homeFlag == "" && a.Getenv("TROUPE_HOME") == "" && a.Getenv("TROUPE_STORE") == "" && a.Getenv("CLAUDECODE") == "1" {
		// Launched by a Claude Code lead (CLAUDE_CODE_TEAMMATE_COMMAND):
		// the team lives under Claude Code's root.
		root := a.Getenv("CLAUDE_CONFIG_DIR")
		if root == "" {
			root = "~/.claude"
		}
		a.homeFlag = root
	}
	cwd := h.cwd
	if cwd == "" {
		wd, err := a.Getwd()
		if err != nil {
			return err
		}
		cwd = wd
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return err
	}
	mode, err := tf.permissionMode(h.permissionMode)
	if err != nil {
		return err
	}
	if mode != "" {
		h.permissionMode = string(mode)
	}
	h.disallowedTools = append(h.disallowedTools, tf.disallowedTools...)
	approver, closeAudit, err := a.headlessApprover(h, cwd)
	if err != nil {
		return err
	}
	defer closeAudit()
	model, err := a.openModel(h)
	if err != nil {
		return fmt.Errorf("teammate %s: %w", tf.agentID, err)
	}
	sess, err := a.open()
	if err != nil {
		return err
	}
	defer sess.close()
	ctx := cmd.Context()
	cfg, err := sess.Teams.Get(ctx, tf.teamName)
	if err != nil {
		return fmt.Errorf("teammate %s: team %q in %s: %w", tf.agentID, tf.teamName, sess.home, err)
	}
	m, ok := cfg.Member(tf.agentName)
	if !ok {
		return fmt.Errorf("teammate %s: team %q has no member %q (members: %s)", tf.agentID, tf.teamName, tf.agentName, strings.Join(cfg.Names(), ", "))
	}
	member := *m
	if tf.agentColor != "" {
		member.Color = tf.agentColor
	}
	if h.model != "" {
		member.Model = h.model
	}
	if h.permissionMode != "" {
		member.Mode = h.permissionMode // the flag the lead started it with
	}
	var trust func(mailbox.Message) bool
	if k := tf.leadKey; k != nil {
		trust = func(msg mailbox.Message) bool {
			forged, err := mailbox.Forged(k, msg)
			return err == nil && !forged
		}
	}
	// The pane shows the timeline; a log under the home keeps it after
	// the pane has closed.
	var errOut io.Writer = a.Stderr
	localHome, err := a.home() // the local folder, whatever the store
	if err != nil {
		return err
	}
	logDir := filepath.Join(localHome, "logs", team.SanitizePath(cfg.Name))
	if err := os.MkdirAll(logDir, 0o700); err == nil {
		if f, err := os.OpenFile(filepath.Join(logDir, team.SanitizePath(member.Name)+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
			defer f.Close()
			errOut = io.MultiWriter(a.Stderr, f)
		}
	}
	var logMu sync.Mutex // events come from many goroutines
	logLine := func(e swarm.Event) {
		logMu.Lock()
		defer logMu.Unlock()
		fmt.Fprintf(errOut, "%s %-10s %s\n", e.Time.Format("15:04:05.000"), e.Agent, e.Text)
	}
	var tm *swarm.Teammate
	tm, cleanup, err := buildTeammate(memberBuild{stores: sess.Stores, team: cfg.Name, member: member, cwd: cwd, model: model,
		base: approver, planned: tf.planModeRequired || member.PlanModeRequired, now: a.Now, trust: trust, askTimeout: h.teams.ask,
		asker:   approve.AskerFunc(func(ctx context.Context, req approve.AskRequest) (approve.Answer, error) { return tm.Ask(ctx, req) }),
		onEvent: logLine, onAgentEvent: toolTimeline(member.Name, a.Now, logLine)})
	if err != nil {
		return err
	}
	defer cleanup()
	fmt.Fprintf(errOut, "troupe teammate %s (%s) joined team %q in %s\n", member.Name, model.Info().Model, cfg.Name, cwd)
	if err := tm.Run(ctx); err != nil {
		fmt.Fprintf(errOut, "teammate %s ended: %v\n", member.Name, err)
		return fmt.Errorf("teammate %s: %w", tf.agentID, err)
	}
	fmt.Fprintf(errOut, "teammate %s shut down\n", member.Name)
	return nil
}

// settingsTeammateMode returns the teammateMode of the settings files (as
// in Claude Code's settings.json), the last file that sets it winning; ""
// when none does. A value that is not a mode is an error naming the file.
func settingsTeammateMode(files []settings.File) (string, error) {
	mode, file, err := settingsKey[string](files, "teammateMode")
	switch {
	case err != nil || mode == "":
		return "", err
	case mode == backend.ModeAuto, mode == backend.ModeTmux, mode == backend.ModeITerm2, mode == backend.ModeInProcess:
		return mode, nil
	}
	return "", fmt.Errorf("%s: teammateMode %q: want auto, tmux, iterm2 or in-process", file, mode)
}

// settingsKey returns the top-level key of the settings files, the last
// file that sets it winning, and that file. Absent and unreadable files
// are skipped (the permission loader reports unreadable ones); a value of
// the wrong type is an error naming the file.
func settingsKey[T any](files []settings.File, key string) (v T, file string, err error) {
	for _, f := range files {
		b, rerr := os.ReadFile(f.Path)
		if rerr != nil {
			continue
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(b, &top) != nil {
			continue // malformed: the permission loader names the position
		}
		raw, ok := top[key]
		if !ok {
			continue
		}
		var val T
		if err := json.Unmarshal(raw, &val); err != nil {
			var zero T
			return zero, f.Path, fmt.Errorf("%s: %s: %v", f.Path, key, err)
		}
		v, file = val, f.Path
	}
	return v, file, nil
}
