package kit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/agenttool"
	"github.com/troupe-dev/troupe/tool/teamtool"
)

// PaneArgv returns the command line and environment of a pane teammate:
// member m of spawn r, in the lead's session, given the key that verifies
// the lead's signed frames.
type PaneArgv func(m team.Member, r swarm.SpawnRequest, session, leadKey string) ([]string, map[string]string, error)

// LeadTeamConfig is what a lead's team needs. The caller opened the
// stores and picked the backends; the team does not close them.
type LeadTeamConfig struct {
	// Mates builds in-process teammates; its Cwd is the lead's, its
	// OnEvent and Stores default to the team's.
	Mates    InProcess
	Stores   Stores
	Backend  backend.Backend
	Fallback backend.Backend // nil: none
	// BackendReason says why Backend was picked, on the timeline.
	BackendReason string
	Session       string
	// ModelName is the model the lead was asked for (its teammates'
	// default), "" for the provider's.
	ModelName string
	Approver  *approve.Approver
	// ModeNow returns the lead's current permission mode ("" or nil: the
	// approver's); teammates never get a wider one.
	ModeNow func() permission.Mode
	// Answer answers teammates' permission questions; nil uses the
	// approver's asker when it has one (a --permission-prompt-command
	// may answer "allow always"), else questions are denied with a reason.
	Answer swarm.Answerer
	// AnswerPlan answers teammates' plans (a person at the helm); nil
	// leaves them to the lead's model.
	AnswerPlan swarm.PlanAnswerer
	// AnswerQuestions puts teammates' questions (AskUserQuestion) to the
	// person; nil asks the approver's --permission-prompt-command when it
	// has one, else teammates are told nobody can answer (docs/ask.md).
	AnswerQuestions swarm.QuestionAnswerer
	// Queuing: the pane teammates are Claude Code, which claims no task by
	// itself and queues the lead's messages.
	Queuing bool
	// Window gives pane teammates a window of their own instead of a
	// split (setting teammateWindow "window").
	Window                bool
	ShutdownAnswerTimeout time.Duration
	Registry              *task.Registry // holds the teammates as tasks
	Deliver               func(string)
	OnEvent               func(swarm.Event)
	IdleNote              func(name string) string // a teammate's note in its idle notification
	PaneArgv              PaneArgv
	// WrapMail wraps the lead's signing mailbox (telemetry: trace context
	// on what it sends); nil leaves it.
	WrapMail func(mailbox.Store) mailbox.Store
	// Reap kills what an ended pane teammate's process left running
	// (swarm.LeadConfig.Reap); nil: nothing.
	Reap  func(agentID string, pid int)
	Log   *slog.Logger   // the Lead's warnings; nil: discarded
	Hooks *Hooks         // TaskCreated and TaskCompleted of the lead's task tools
	Trees *TeamWorktrees // teammates' worktrees; nil: none
	// Explicit offers TeamCreate and TeamDelete (the seeds' explicit
	// flow, setting teams.explicit); by default a named Agent call
	// spawns into the session's team (implicit.go) and the lead has
	// neither.
	Explicit bool
}

// LeadTeam is the team runtime of a lead: its swarm.Lead and what its
// tools use.
type LeadTeam struct {
	Lead *swarm.Lead
	// Stores are the ones the lead's tools use: its mail is signed (the
	// lead's frames, docs/protocol.md section 4.3) and recorded by the Lead (what is
	// owed an answer).
	Stores Stores
	// Raw are the stores as given, without the lead's signing and
	// tracing: for looks that are no delivery (QueueDepths).
	Raw   Stores
	Trees *TeamWorktrees
	hooks *Hooks
	// session is the lead's session id, naming its implicit team
	// (implicit.go).
	session    string
	implicitMu sync.Mutex
	explicit   bool // TeamCreate and TeamDelete offered (LeadTeamConfig.Explicit)
}

// NewLeadTeam builds a lead's team runtime: the Lead with its signing
// mailbox, in-process teammates through c.Mates, pane teammates through
// c.PaneArgv, and teammates' "allow always" rules saved to the project's
// .troupe/settings.local.json.
func NewLeadTeam(c LeadTeamConfig) (*LeadTeam, error) {
	switch {
	case c.Backend == nil:
		return nil, errors.New("lead team: no teammate backend")
	case c.Approver == nil:
		return nil, errors.New("lead team: no approver (the permission layer the teammates start from)")
	case c.Stores.Teams == nil || c.Stores.Mail == nil || c.Stores.Tasks == nil:
		return nil, errors.New("lead team: the team, mail and task stores are all needed")
	}
	now := c.Mates.Run.Now
	if now == nil {
		now = time.Now
	}
	cwd := c.Mates.Cwd
	if c.OnEvent != nil {
		text := fmt.Sprintf("teammates run %s (%s)", c.Backend.Name(), c.BackendReason)
		if at, ok := c.Backend.(interface{ AttachCommand() string }); ok && at.AttachCommand() != "" {
			text += "; watch them with: " + at.AttachCommand()
		}
		c.OnEvent(swarm.Event{Time: now(), Agent: team.LeadName, Kind: "backend", Text: text})
	}
	signer, err := mailbox.NewLeadSigner(now())
	if err != nil {
		return nil, err
	}
	var mail mailbox.Store = swarm.SigningMail{Store: c.Stores.Mail, Teams: c.Stores.Teams, Signer: signer, Now: now}
	mail = swarm.RetryFull(mail, team.LeadName, now, c.OnEvent) // a full disk delays the lead's messages, never drops them
	if c.WrapMail != nil {
		mail = c.WrapMail(mail)
	}
	leadKey := signer.VerifyKey().String()
	settingsFile := filepath.Join(cwd, ".troupe", "settings.local.json")
	mates := c.Mates
	if mates.OnEvent == nil {
		mates.OnEvent = c.OnEvent // the team's timeline
	}
	if mates.Stores == (Stores{}) {
		mates.Stores = c.Stores
	}
	lead, err := swarm.NewLead(swarm.LeadConfig{
		Teams: c.Stores.Teams, Mail: mail, Tasks: c.Stores.Tasks,
		Session: c.Session, Cwd: cwd, Model: c.ModelName, Mode: string(c.Approver.Mode), ModeNow: c.ModeNow,
		Backend: c.Backend, Fallback: c.Fallback, Answer: c.answerer(), AnswerPlan: c.AnswerPlan, AnswerQuestions: c.questions(), Policy: c.Approver.Policy,
		NoAutoClaim: c.Queuing, QueuingPanes: c.Queuing, Window: c.Window,
		ShutdownAnswerTimeout: c.ShutdownAnswerTimeout, Registry: c.Registry, Reap: c.Reap,
		PersistRule: func(rule string) error {
			return settings.AddRule(context.Background(), settingsFile, permission.Allow, rule)
		},
		Deliver: c.Deliver, Now: now, Log: c.Log, OnEvent: c.OnEvent, IdleNote: c.IdleNote,
		Launch: func(ctx context.Context, l *swarm.Lead, m team.Member, r swarm.SpawnRequest, beName string) (backend.Spec, error) {
			if beName != backend.InProcess {
				if c.PaneArgv == nil {
					return backend.Spec{}, fmt.Errorf("teammate %s: this lead cannot start pane teammates", m.Name)
				}
				argv, env, err := c.PaneArgv(m, r, c.Session, leadKey)
				return backend.Spec{Argv: argv, Env: env}, err
			}
			m.TmuxPaneID, m.BackendType = backend.InProcess, backend.InProcess
			return backend.Spec{Run: func(ctx context.Context) error { return mates.Launch(ctx, l, m, r) }}, nil
		},
	})
	if err != nil {
		return nil, err
	}
	st := c.Stores
	st.Mail = lead.Mail() // the lead's tools send through it: it records what is owed an answer
	return &LeadTeam{Lead: lead, Stores: st, Raw: c.Stores, Trees: c.Trees, hooks: c.Hooks, session: c.Session, explicit: c.Explicit}, nil
}

// questions is c.AnswerQuestions, or one made from the approver's
// --permission-prompt-command.
func (c LeadTeamConfig) questions() swarm.QuestionAnswerer {
	if c.AnswerQuestions != nil || c.Approver == nil {
		return c.AnswerQuestions
	}
	pc, ok := c.Approver.Asker.(*approve.Command)
	if !ok {
		return nil
	}
	qc := approve.QuestionCommand{Command: pc, Cwd: c.Mates.Cwd}
	return func(ctx context.Context, q swarm.QuestionAsk) (ask.Reply, error) {
		return qc.AskQuestions(ctx, ask.Request{Agent: q.Worker, ToolUseID: q.ToolUseID, Questions: q.Questions})
	}
}

// answerer is c.Answer, or one made from the approver's asker.
func (c LeadTeamConfig) answerer() swarm.Answerer {
	if c.Answer != nil || c.Approver == nil || c.Approver.Asker == nil {
		return c.Answer
	}
	cwd := c.Mates.Cwd
	if pc, ok := c.Approver.Asker.(*approve.Command); ok {
		return func(ctx context.Context, q swarm.PermissionAsk) (swarm.PermissionAnswer, error) {
			return CommandAnswer(ctx, pc, q, cwd)
		}
	}
	asker := c.Approver.Asker
	return func(ctx context.Context, q swarm.PermissionAsk) (swarm.PermissionAnswer, error) {
		ans, err := asker.Ask(ctx, approve.AskRequest{Agent: q.Worker, Tool: q.Tool, ToolUseID: q.ToolUseID, Input: q.Input, Cwd: cwd, Reason: q.Description})
		return swarm.PermissionAnswer{Allow: ans.Allow, Message: ans.Message}, err
	}
}

// CommandAnswer answers a teammate's question relayed to a lead through a
// --permission-prompt-command: allow, allow always (the whole team,
// "always": true and an optional "rule"), or deny with a message.
func CommandAnswer(ctx context.Context, pc *approve.Command, q swarm.PermissionAsk, cwd string) (swarm.PermissionAnswer, error) {
	ans, err := pc.Decide(ctx, approve.CommandRequest{Agent: q.Worker, ToolName: q.Tool, Input: q.Input, ToolUseID: q.ToolUseID, Reason: q.Description, Cwd: cwd})
	if err != nil {
		return swarm.PermissionAnswer{}, err
	}
	allow := ans.Behavior == "allow"
	return swarm.PermissionAnswer{Allow: allow, Always: allow && ans.Always, Rule: ans.Rule, Message: ans.Message}, nil
}

// Tools returns the lead's team tools: SendMessage (teammates, then the
// background sub-agents of subSend) and the task list, and TeamCreate and
// TeamDelete when the team is explicit (LeadTeamConfig.Explicit).
func (lt *LeadTeam) Tools(subSend tool.Tool, now func() time.Time) []tool.Tool {
	var lead teamtool.Lead = lt.Lead
	if lt.Trees != nil {
		lead = DeletingLead{Lead: lt.Lead, Trees: lt.Trees} // TeamDelete reports the teammates' worktrees
	}
	all := teamtool.Tools(teamtool.Config{Teams: lt.Stores.Teams, Mail: lt.Stores.Mail, Tasks: lt.Stores.Tasks, Lead: lead,
		Self: func() teamtool.Self {
			return teamtool.Self{Team: lt.Lead.Team(), Name: team.LeadName, Lead: true}
		},
		SubAgents: subSend, Now: now, Hooks: teamtool.Hooks{PlanDigest: lt.Lead.PlanDigest, TaskGate: lt.hooks.TaskGate()}})
	if lt.explicit {
		return all
	}
	return implicitTools(all, lt.implicit(nil)) // implicit.go
}

// Teammates is the Agent tool's way to spawn teammates of this team, each
// in its own worktree when asked.
func (lt *LeadTeam) Teammates() agenttool.Teammates {
	var inner agenttool.Teammates = spawner{lt.Lead}
	if lt.Trees != nil {
		inner = IsolatedTeammates{Inner: inner, Team: lt.Lead.Team, Trees: lt.Trees}
	}
	return lt.implicit(inner)
}

// implicit is the lead's implicit team (implicit.go), spawning through
// inner.
func (lt *LeadTeam) implicit(inner agenttool.Teammates) implicitTeam {
	return implicitTeam{inner: inner, lead: lt.Lead, name: SessionTeam(lt.session), mu: &lt.implicitMu}
}

// spawner adapts a Lead to the Agent tool's Teammates.
type spawner struct{ lead *swarm.Lead }

func (t spawner) SpawnTeammate(ctx context.Context, r agenttool.TeammateRequest) (agenttool.TeammateInfo, error) {
	info, err := t.lead.Spawn(ctx, swarm.SpawnRequest{Name: r.Name, Description: r.Description, Prompt: r.Prompt,
		Model: r.Model, AgentType: r.AgentType, Mode: r.Mode, PlanModeRequired: r.PlanModeRequired, Cwd: r.Dir, Color: r.Color, Window: r.Window})
	if err != nil {
		return agenttool.TeammateInfo{}, err
	}
	return agenttool.TeammateInfo{AgentID: info.AgentID, Name: info.Name, Team: info.Team, Color: info.Color, Model: info.Model,
		Backend: info.Backend, PaneID: info.PaneID, PlanModeRequired: info.PlanModeRequired, WindowName: info.WindowName}, nil
}
