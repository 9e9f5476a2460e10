package main

import (
	"cmp"
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
	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/session"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/telemetry"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/transcript"

	teamtool "github.com/troupe-dev/troupe/tool/team"
)

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
	// ac gives it the project instructions and the environment.
	ac *agentContext
	// tx keeps its transcript and its sub-agents'.
	tx *transcripts
	// tel traces it (telemetry.go); nil when telemetry is off.
	tel *telemetry.Agent
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
		pruneOutputDir(dir)
	}
	base := *p.base
	base.Agent = p.member.Name
	base.Cwd = cmp.Or(p.member.Cwd, base.Cwd) // its own worktree, if it has one
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
	p.model = teammateModel(p.model, p.ac, p.member.Name, p.member.AgentType) // budget.go: charged to it, under its maxBudgetUsd
	p.stores.Mail = p.tel.Mail(p.stores.Mail, true)                           // telemetry.go: its runs join the trace of the message that woke it
	p.onEvent = countClaims(p.tel, p.onEvent)                                 // telemetry.go
	self := teamtool.Self{Team: p.team, Name: p.member.Name, Color: p.member.Color, PaneID: p.member.TmuxPaneID, Backend: p.member.BackendType}
	tm, err := swarm.NewTeammate(swarm.TeammateConfig{
		Team: p.team, Name: p.member.Name, Color: p.member.Color, PaneID: p.member.TmuxPaneID, Backend: p.member.BackendType,
		Teams: p.stores.Teams, Mail: p.stores.Mail, Tasks: p.stores.Tasks,
		Prompt: p.prompt, PlanMode: p.planned, Trust: p.trust, Now: p.now, OnEvent: p.onEvent, AskTimeout: p.askTimeout,
		SetMode:       func(m string) { _ = appr.SetMode(m) },
		AddAllowRules: func(r []string) { _ = appr.AddAllowRules(r) },
		BeforeIdle:    p.ac.hooks.teammateIdle(p.team, p.member.Name),
		Final:         budgetFinal, // budget.go: a spent budget ends it
		Build: func(tm *swarm.Teammate) (agent.Config, error) {
			core, subSend := coreTools(toolOptions{cwd: p.cwd, reg: reg, model: p.model, modelName: p.member.Model, approver: appr, ac: p.ac,
				tx: p.tx, parent: p.member.Name})
			tt := teamtool.Tools(teamtool.Config{Teams: p.stores.Teams, Mail: p.stores.Mail, Tasks: p.stores.Tasks,
				Self: func() teamtool.Self { return self }, SubAgents: subSend, Now: p.now,
				Hooks: teamtool.Hooks{ShutdownApproved: tm.ShutdownApproved, PlanSubmitted: tm.PlanSubmitted, TaskGate: p.ac.hooks.taskGate()}})
			tools, err := tool.NewRegistry(append(core, tt...)...)
			if err != nil {
				return agent.Config{}, err
			}
			system, err := p.ac.system(brief.RoleTeammate, brief.Vars{Name: p.member.Name, Team: p.team, Planned: p.planned}, "")
			if err != nil {
				return agent.Config{}, err
			}
			tools, system = asAgentType(p.ac.agents, p.member.AgentType, tools, swarm.TeamTools, system) // agents.go
			nested := p.ac.nested(tm.Notify)
			return agent.Config{Model: p.model, ModelName: p.member.Model, Tools: tools, Approver: appr, Now: p.now, Hooks: p.ac.hooks.forAgent(p.member.Name, false),
				System: system, Environment: p.ac.environment, Transcript: p.tx.writer(p.member.Name, transcript.KindTeammate, ""),
				OnEvent: func(e agent.Event) {
					p.tel.Observe(e) // nil-safe
					nested(e)
					if p.onAgentEvent != nil {
						p.onAgentEvent(e)
					}
				}}, nil
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
				tm.Notify(session.SystemNotification(e.Notification))
			}
		}
	}()
	return tm, func() { sub.Close(); <-done; cleanup() }, nil
}

// toolTimeline turns a teammate's tool calls into timeline events.
func toolTimeline(name string, now func() time.Time, on func(swarm.Event)) func(agent.Event) {
	if on == nil {
		return nil
	}
	return func(e agent.Event) {
		if reason, ok := hookBlocked(e); ok { // hooks.go
			on(swarm.Event{Time: now(), Agent: name, Kind: swarm.EventHook, Text: reason})
		}
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

// runTeammate runs this process as a teammate (started with --agent-id,
// --agent-name and --team-name, by a troupe or Claude Code lead in a
// pane): it joins the team in the store, reads its first prompt from its
// inbox, and works until its shutdown is approved or it is stopped.
func (a *app) runTeammate(cmd *cobra.Command, h *headless) error {
	tf := h.teams.mate
	if err := h.teams.checkAskTimeout(); err != nil {
		return err
	}
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
	if model, err = a.meterPane(h, cwd, tf.parentSessionID, tf.agentName, model); err != nil { // budget.go
		return err
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
		fmt.Fprintf(errOut, "%s %-10s %s\n", e.Time.Format("15:04:05.000"), termtext.Line(e.Agent), termtext.Clean(e.Text))
	}
	var tm *swarm.Teammate
	hs, err := a.openHooks(cwd, cmp.Or(tf.parentSessionID, tf.agentID), approver.Audit, errOut) // hooks.go
	if err != nil {
		return err
	}
	approver.PermissionHook = hs.permissionHook()
	closeMCP, err := a.startMCP(ctx, cwd) // mcp.go: a pane teammate's own servers
	if err != nil {
		return err
	}
	defer closeMCP()
	ac := a.newAgentContext(cwd, cmp.Or(member.Model, model.Info().Model), h.noInstr, approver)
	flushTel, err := a.paneTelemetry(ctx) // telemetry.go
	if err != nil {
		return err
	}
	defer flushTel()
	var tx *transcripts
	if tf.parentSessionID != "" {
		tx = a.transcriptsFor(tf.parentSessionID) // beside the lead's
	}
	tm, cleanup, err := buildTeammate(memberBuild{stores: sess.Stores, team: cfg.Name, member: member, cwd: cwd, model: model, ac: ac, tx: tx,
		base: approver, planned: tf.planModeRequired || member.PlanModeRequired, now: a.Now, trust: trust, askTimeout: h.teams.ask,
		asker:   approve.AskerFunc(func(ctx context.Context, req approve.AskRequest) (approve.Answer, error) { return tm.Ask(ctx, req) }),
		onEvent: logLine, onAgentEvent: toolTimeline(member.Name, a.Now, logLine), tel: a.tel.mate(member.Name, cmp.Or(member.Model, model.Info().Model))})
	if err != nil {
		return err
	}
	defer cleanup()
	fmt.Fprintf(errOut, "troupe teammate %s (%s) joined team %q in %s\n", member.Name, model.Info().Model, cfg.Name, cwd)
	a.joined = true // from here an end is the lead's to see, not a failure to start
	if err := tm.Run(ctx); err != nil {
		fmt.Fprintf(errOut, "teammate %s ended: %v\n", member.Name, err)
		return fmt.Errorf("teammate %s: %w", tf.agentID, err)
	}
	fmt.Fprintf(errOut, "teammate %s shut down\n", member.Name)
	return nil
}
