package kit

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/budget"
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
	"github.com/troupe-dev/troupe/tool/agenttool"
	"github.com/troupe-dev/troupe/tool/asktool"
	"github.com/troupe-dev/troupe/tool/teamtool"
	"github.com/troupe-dev/troupe/transcript"
)

// MateEvents passes on the events of an in-process teammate that the
// lead's own do not already tell (claims, warnings): its idle
// notifications, shutdown and permission and plan steps reach the
// timeline once, as the lead sees them, in every backend.
func MateEvents(on func(swarm.Event)) func(swarm.Event) {
	if on == nil {
		return nil
	}
	return func(e swarm.Event) {
		switch e.Kind {
		case swarm.EventClaim, swarm.EventWarning, swarm.EventHook:
			on(e)
		}
	}
}

// TeammateConfig is what building a teammate's agent needs, in either
// process: the lead's (in-process teammates) or its own (pane teammates).
type TeammateConfig struct {
	Stores Stores // the team's
	Team   string
	Member team.Member
	Cwd    string
	Model  llm.Model
	Base   *approve.Approver // the permission layer the teammate starts from
	// Ceiling, when set, returns the widest mode the teammate may run in:
	// its lead's (permission.ChildMode). Its member's mode and the mode
	// an approved plan switches it to are narrowed to it.
	Ceiling func() permission.Mode
	Asker   approve.Asker // where its questions go
	Prompt  string
	Planned bool
	Now     func() time.Time
	OnEvent func(swarm.Event)
	Trust   func(mailbox.Message) bool
	// AskTimeout bounds the wait for the lead's answers (0: the default).
	AskTimeout time.Duration
	// Rules receives the teammate's Approver.AddAllowRules (the lead's
	// team-wide "allow always" Rules, for in-process teammates).
	Rules func(add func([]string))
	// OnAgentEvent sees the teammate's agent events (stream-json, logs).
	OnAgentEvent func(agent.Event)
	// Context gives it the project instructions and the environment.
	Context *Context
	// Transcripts keeps its transcript and its sub-agents'.
	Transcripts *Transcripts
	// Telemetry traces it; nil when telemetry is off.
	Telemetry *telemetry.Agent
}

// Teammate returns a teammate ready to Run, and the cleanup to call
// after it ends (stops its background tasks).
func Teammate(p TeammateConfig) (*swarm.Teammate, func(), error) {
	dir, err := task.OutputDir("", ProjectSlug(p.Cwd), p.Team+"-"+p.Member.Name+"-"+mailbox.NewID()[:8])
	if err != nil {
		return nil, nil, err
	}
	reg := task.New(task.Config{Dir: dir})
	bg := &mateBackground{reg: reg, name: p.Member.Name, now: p.Now, on: p.OnEvent, done: map[task.ID]bool{}}
	cleanup := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		reg.Close(ctx)
		PruneOutputDir(dir)
	}
	base := *p.Base
	base.Agent = p.Member.Name
	base.Cwd = cmp.Or(p.Member.Cwd, base.Cwd) // its own worktree, if it has one
	FollowWorktree(&base)                     // the project's rules hold there too
	base.Asker = p.Asker
	base.Hint = nil
	if p.Member.Mode != "" { // "auto" reads as acceptEdits, an unknown mode as default
		base.Mode = permission.ChildMode(permission.ModeBypass, permission.Mode(p.Member.Mode))
	}
	bound := func(m permission.Mode) permission.Mode {
		if p.Ceiling != nil {
			if c := p.Ceiling(); c != "" {
				return permission.ChildMode(c, m)
			}
		}
		return m
	}
	base.Mode = bound(base.Mode)
	if p.Planned {
		base.Mode = permission.ModePlan
	}
	appr := swarm.NewApprover(&base)
	if p.Ceiling != nil {
		appr.SetCeiling(p.Ceiling) // and at every call: never wider than the lead is now
	}
	if cfg, err := p.Stores.Teams.Get(context.Background(), p.Team); err == nil {
		_ = appr.AddAllowRules(swarm.TeamRules(cfg.TeamAllowedPaths))
	}
	followCtx, stopFollow := context.WithCancel(context.Background())
	if p.Member.BackendType != "" && p.Member.BackendType != team.BackendInProcess {
		// A pane teammate hears of the team's new path rules through the
		// team file (an in-process one gets them from the lead: Rules).
		followTeamPaths(followCtx, p.Stores.Teams, p.Team, func(r []string) { _ = appr.AddAllowRules(r) })
	}
	if p.Rules != nil {
		p.Rules(func(r []string) { _ = appr.AddAllowRules(r) })
	}
	p.Model = teammateModel(p.Model, p.Context, p.Member.Name, p.Member.AgentType)  // charged to it, under its maxBudgetUsd
	p.Stores.Mail = p.Telemetry.Mail(p.Stores.Mail, true)                           // its runs join the trace of the message that woke it
	p.Stores.Mail = swarm.RetryFull(p.Stores.Mail, p.Member.Name, p.Now, p.OnEvent) // a full disk delays its idle notices and reports, never drops them
	p.OnEvent = countClaims(p.Telemetry, p.OnEvent)
	self := teamtool.Self{Team: p.Team, Name: p.Member.Name, Color: p.Member.Color, PaneID: p.Member.TmuxPaneID, Backend: p.Member.BackendType}
	var subAgents atomic.Pointer[agenttool.Tool] // the teammate's Agent tool, once built
	tm, err := swarm.NewTeammate(swarm.TeammateConfig{
		Team: p.Team, Name: p.Member.Name, Color: p.Member.Color, PaneID: p.Member.TmuxPaneID, Backend: p.Member.BackendType,
		Teams: p.Stores.Teams, Mail: p.Stores.Mail, Tasks: p.Stores.Tasks,
		Prompt: p.Prompt, PlanMode: p.Planned, Trust: p.Trust, Now: p.Now, OnEvent: p.OnEvent, AskTimeout: p.AskTimeout,
		SetMode: func(m string) string {
			_ = appr.SetMode(string(bound(permission.Mode(m))))
			return string(appr.Mode())
		},
		AddAllowRules: func(r []string) { _ = appr.AddAllowRules(r) },
		BeforeIdle:    p.Context.hooks.TeammateIdle(p.Team, p.Member.Name),
		Background:    bg.running,
		Final:         budgetFinal, // its own spent budget ends it
		Spent:         budgetSpent, // the session's: the lead asks it to shut down
		Build: func(tm *swarm.Teammate) (agent.Config, error) {
			core, subSend := Tools(ToolOptions{Cwd: p.Cwd, Registry: reg, Model: p.Model, ModelName: p.Member.Model, Approver: appr, Context: p.Context,
				Transcripts: p.Transcripts, Parent: p.Member.Name})
			for _, t := range core {
				if at, ok := t.(*agenttool.Tool); ok {
					subAgents.Store(at) // its sub-agents' shells report to them (below)
				}
			}
			tt := teamtool.Tools(teamtool.Config{Teams: p.Stores.Teams, Mail: p.Stores.Mail, Tasks: p.Stores.Tasks,
				Self: func() teamtool.Self { return self }, SubAgents: subSend, Now: p.Now,
				Hooks: teamtool.Hooks{ShutdownApproved: tm.ShutdownApproved, PlanSubmitted: tm.PlanSubmitted, TaskGate: p.Context.hooks.TaskGate()}})
			if p.Asker != nil { // its questions go to the lead's person (docs/ask.md)
				tt = append(tt, asktool.New(p.Member.Name, swarm.PersonAsker{Asker: p.Asker, Cwd: p.Cwd}))
			}
			all := Addressable(append(core, tt...), Addressing{Teams: p.Stores.Teams, Team: func() string { return p.Team }, Self: p.Member.Name}) // ListAgents: the lead, teammates, its sub-agents
			tools, err := tool.NewRegistry(all...)
			if err != nil {
				return agent.Config{}, err
			}
			system, err := p.Context.System(brief.RoleTeammate, brief.Vars{Name: p.Member.Name, Team: p.Team, Planned: p.Planned}, "")
			if err != nil {
				return agent.Config{}, err
			}
			tools, system = AsAgentType(p.Context.agents, p.Member.AgentType, tools, swarm.TeamTools, system) // agents.go
			nested := p.Context.Nested(tm.Notify)
			return p.Context.NarrowBySkills(agent.Config{Model: p.Model, ModelName: p.Member.Model, Tools: tools, Approver: appr, Now: p.Now, Hooks: p.Context.hooks.ForAgent(p.Member.Name, false),
				Attach: p.Context.OutputDigest(reg, ""),
				System: system, Environment: p.Context.Environment, Transcript: p.Transcripts.Writer(p.Member.Name, transcript.KindTeammate, ""),
				OnEvent: func(e agent.Event) {
					p.Telemetry.Observe(e) // nil-safe
					nested(e)
					if p.OnAgentEvent != nil {
						p.OnAgentEvent(e)
					}
				}})
		}})
	if err != nil {
		stopFollow()
		cleanup()
		return nil, nil, err
	}
	// The teammate's background tasks report to it, not to the lead.
	stop := reg.Follow(func(e task.Event) {
		if e.Notification != "" {
			text := session.SystemNotification(e.Notification)
			at, owner := subAgents.Load(), task.Owner(e.State)
			if owner == "" || at == nil || at.Send(owner, text) != nil { // a running sub-agent's own shell is for it
				tm.Notify(text)
			}
		}
		if e.Kind == task.EventTerminated {
			bg.handed(e.State.ID)
		}
	})
	return tm, func() { stopFollow(); stop(); bg.report(); cleanup() }, nil
}

// followTeamPaths adds the rules of the team file's teamAllowedPaths
// (swarm.TeamRules) each time it changes, until ctx ends: the lead writes
// one when a person allows a folder for the whole team (swarm.TeamPath).
// A store that cannot watch gives only the rules read at the start.
func followTeamPaths(ctx context.Context, teams team.Store, teamName string, add func([]string)) {
	w, ok := teams.(team.Watcher)
	if !ok {
		return
	}
	ch, err := w.Watch(ctx, teamName)
	if err != nil {
		return
	}
	go func() {
		seen := map[string]bool{}
		for range ch {
			cfg, err := teams.Get(ctx, teamName)
			if err != nil {
				continue
			}
			var fresh []string
			for _, r := range swarm.TeamRules(cfg.TeamAllowedPaths) {
				if !seen[r] {
					seen[r] = true
					fresh = append(fresh, r)
				}
			}
			if len(fresh) > 0 {
				add(fresh)
			}
		}
	}()
}

// mateBackground is what a teammate's background tasks are to its team:
// work that keeps it active until each has ended and its notification was
// handed to it (swarm.TeammateConfig.Background), and, when the teammate
// ends first, tasks stopped with it and reported on the timeline.
type mateBackground struct {
	reg  *task.Registry
	name string
	now  func() time.Time
	on   func(swarm.Event)

	mu   sync.Mutex
	done map[task.ID]bool // ended, and the teammate was handed the news
}

// handed records that task id's end reached the teammate.
func (b *mateBackground) handed(id task.ID) {
	b.mu.Lock()
	b.done[id] = true
	b.mu.Unlock()
}

// running reports whether a task still runs, or ended without its news
// handed to the teammate yet; monitors do not count (watch).
func (b *mateBackground) running() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.reg.List() {
		if watch(s) {
			continue
		}
		if s.Status.Active() || !b.done[s.ID] {
			return true
		}
	}
	return false
}

// watch reports whether s is a monitor or a monitor's shell: a watch, not
// work. The teammate goes idle while it runs, and what it reports wakes
// the teammate (Notify), so it must not keep the teammate active.
func watch(s task.State) bool {
	if s.Type == task.MonitorMCP {
		return true
	}
	sh, ok := s.Detail.(*task.Shell)
	return ok && sh.Kind == "monitor"
}

// report puts on the timeline the tasks still running as the teammate
// ends: they are stopped with it (its registry's Close), and whoever
// watches the team is told which.
func (b *mateBackground) report() {
	if b.on == nil {
		return
	}
	now := time.Now
	if b.now != nil {
		now = b.now
	}
	for _, s := range b.reg.List() {
		if !s.Status.Active() {
			continue
		}
		what := s.Description
		if sh, ok := s.Detail.(*task.Shell); ok && what == "" {
			what = sh.Command
		}
		b.on(swarm.Event{Time: now(), Agent: b.name, Kind: swarm.EventWarning,
			Text: fmt.Sprintf("stopped its background task %s (%q) as it ended", s.ID, what)})
	}
}

// ToolTimeline turns a teammate's tool calls into timeline events.
func ToolTimeline(name string, now func() time.Time, on func(swarm.Event)) func(agent.Event) {
	if on == nil {
		return nil
	}
	return func(e agent.Event) {
		if reason, ok := HookBlocked(e); ok { // hooks.go
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

// InProcess is what the lead's in-process teammates are built from.
type InProcess struct {
	Run         Run
	Stores      Stores
	Cwd         string // the lead's; a member with a worktree works there
	Model       llm.Model
	NoInstr     bool              // --no-project-instructions
	Approver    *approve.Approver // the lead's permission layer, the teammates' start
	Transcripts *Transcripts
	OnEvent     func(swarm.Event) // the team's timeline
	AskTimeout  time.Duration
	// Telemetry returns the telemetry of teammate name on model; nil
	// (or a nil result) when telemetry is off.
	Telemetry func(name, model string) *telemetry.Agent
}

// Launch runs member m of l's team in this process, on the prompt of its
// spawn r, until it shuts down or ctx ends: its questions go to the lead
// (l.AskInProcess), it takes the team's "allow always" rules, its
// progress shows in its task and its current turn can be interrupted.
func (p InProcess) Launch(ctx context.Context, l *swarm.Lead, m team.Member, r swarm.SpawnRequest) error {
	now := p.Run.Now
	if now == nil {
		now = time.Now
	}
	cwd := cmp.Or(m.Cwd, p.Cwd)
	ac := p.Run.NewContext(cwd, cmp.Or(m.Model, p.Model.Info().Model), p.NoInstr, p.Approver)
	var tm *swarm.Teammate
	timeline := ToolTimeline(m.Name, now, p.OnEvent)
	onAgentEvent := func(e agent.Event) { // the timeline, and the teammate's progress in its task
		if timeline != nil {
			timeline(e)
		}
		if tm != nil && (e.Type == agent.EventToolUse || e.Type == agent.EventAssistant) {
			pr := tm.Agent().Progress()
			recent := make([]string, len(pr.Recent))
			for i, act := range pr.Recent {
				recent[i] = swarm.Activity(act.Tool, act.Input)
			}
			l.MateProgress(m.Name, task.Usage{TotalTokens: pr.LatestInputTokens + pr.OutputTokens, ToolUses: pr.ToolUses}, recent)
		}
	}
	var tel *telemetry.Agent
	if p.Telemetry != nil {
		tel = p.Telemetry(m.Name, cmp.Or(m.Model, p.Model.Info().Model))
	}
	tm, cleanup, err := Teammate(TeammateConfig{Stores: p.Stores, Team: l.Team(), Member: m, Cwd: cwd, Model: p.Model, Context: ac, Transcripts: p.Transcripts,
		Base: p.Approver, Ceiling: l.Mode, Prompt: r.Prompt, Planned: r.PlanModeRequired, Now: now, OnEvent: MateEvents(p.OnEvent), AskTimeout: p.AskTimeout,
		Asker: approve.AskerFunc(func(ctx context.Context, req approve.AskRequest) (approve.Answer, error) {
			return tm.AskMirrored(ctx, req, func(ctx context.Context, req approve.AskRequest) (approve.Answer, error) { // the dashboard sees it too
				return l.AskInProcess(ctx, m.Name, m.Color, req)
			})
		}),
		Rules:        func(add func([]string)) { l.RegisterRules(m.Name, add) },
		OnAgentEvent: onAgentEvent, Telemetry: tel})
	if err != nil {
		return err
	}
	defer cleanup()
	l.RegisterInterrupt(m.Name, func() bool { return tm.Agent().Interrupt() })
	return tm.Run(ctx)
}

// teammateModel charges a teammate's model calls to it, under its agent
// type's maxBudgetUsd.
func teammateModel(model llm.Model, ac *Context, name, agentType string) llm.Model {
	var own budget.Limits
	for _, d := range ac.Agents() {
		if d.Name == agentType {
			own.USD = d.MaxBudgetUSD
		}
	}
	return budget.For(model, name, own)
}

// budgetFinal reports the run errors that end a teammate for good: its
// own limit (maxBudgetUsd) reached. It tells the lead and leaves.
func budgetFinal(err error) bool {
	var ee *budget.ExceededError
	return errors.As(err, &ee) && ee.Agent != ""
}

// budgetSpent reports the run errors of the session's limits reached
// (--max-budget-usd, --max-tokens): the teammate waits for the lead's
// shutdown request and approves it without its model.
func budgetSpent(err error) bool {
	var ee *budget.ExceededError
	return errors.As(err, &ee) && ee.Agent == ""
}

// countClaims counts a teammate's task claims in its telemetry.
func countClaims(tel *telemetry.Agent, on func(swarm.Event)) func(swarm.Event) {
	if tel == nil {
		return on
	}
	return func(e swarm.Event) {
		if e.Kind == swarm.EventClaim {
			tel.Claimed(e.Text)
		}
		if on != nil {
			on(e)
		}
	}
}
