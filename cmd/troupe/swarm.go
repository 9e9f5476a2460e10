package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/transcript"

	"github.com/troupe-dev/troupe/tool/agenttool"
	"github.com/troupe-dev/troupe/tool/teamtool"
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
	return truthy(a.Getenv(EnvAgentTeams)) || truthy(a.Getenv(EnvClaudeAgentTeams))
}

// leadTeam is the team runtime of a headless lead.
type leadTeam struct {
	lead   *swarm.Lead
	stores Stores
	raw    Stores // the stores without the lead's signing and tracing: for looks that are no delivery (telemetry_jobs.go)
	close  func()
	trees  *kit.TeamWorktrees // teammates' worktrees (worktrees.go)
	hooks  *kit.Hooks         // TaskCreated and TaskCompleted of the lead's task tools
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
	answer swarm.Answerer
	// answerPlan answers teammates' plans (a person at the helm); nil
	// leaves them to the lead's model.
	answerPlan swarm.PlanAnswerer
	onEvent    func(swarm.Event)
	deliver    func(string)
	reg        *task.Registry   // holds the teammates as tasks
	tx         *kit.Transcripts // the session's transcripts
	// paneArgv returns the command line of a pane teammate.
	paneArgv func(m team.Member, r swarm.SpawnRequest, session, leadKey string) ([]string, map[string]string, error)
	idleNote func(name string) string // a teammate's worktree, in its idle notification (worktrees.go)
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
		text := fmt.Sprintf("teammates run %s (%s)", be.Name(), reason)
		if at, ok := be.(interface{ AttachCommand() string }); ok && at.AttachCommand() != "" {
			text += "; watch them with: " + at.AttachCommand()
		}
		o.onEvent(swarm.Event{Time: a.Now(), Agent: team.LeadName, Kind: "backend", Text: text})
	}
	answer := o.answer
	if pc, ok := o.approver.Asker.(*approve.Command); ok && answer == nil {
		answer = func(ctx context.Context, q swarm.PermissionAsk) (swarm.PermissionAnswer, error) {
			return teamAnswer(ctx, pc, q, o.cwd)
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
	// The lead signs what it writes (PROTOCOL.md 4.3); pane teammates get
	// the key with --lead-verify-key and ignore unsigned lead frames.
	signer, err := mailbox.NewLeadSigner(a.Now())
	if err != nil {
		closeStores()
		return nil, err
	}
	leadStores := st
	leadStores.Mail = a.tel.leadMail(swarm.SigningMail{Store: st.Mail, Teams: st.Teams, Signer: signer, Now: a.Now}) // telemetry.go: trace context on what it sends
	leadKey := signer.VerifyKey().String()
	lt := &leadTeam{stores: leadStores, raw: st, hooks: a.hooks}
	mates := kit.InProcess{Run: a.kitRun(), Stores: st.kit(), Cwd: o.cwd, Model: o.model, NoInstr: o.h.noInstr, Approver: o.approver,
		Transcripts: o.tx, OnEvent: o.onEvent, AskTimeout: o.h.teams.ask, Telemetry: a.tel.mate}
	var lead *swarm.Lead
	lead, err = swarm.NewLead(swarm.LeadConfig{
		Teams: st.Teams, Mail: leadStores.Mail, Tasks: st.Tasks,
		Session: o.session, Cwd: o.cwd, Model: o.h.model, Mode: string(o.approver.Mode),
		Backend: be, Fallback: fallback, Answer: answer, AnswerPlan: o.answerPlan, Policy: o.approver.Policy, NoAutoClaim: teammateCommand(a, o.h) != "", QueuingPanes: teammateCommand(a, o.h) != "",
		ShutdownAnswerTimeout: o.h.teams.shut, Registry: o.reg,
		PersistRule: func(rule string) error {
			return settings.AddRule(context.Background(), settingsFile, permission.Allow, rule)
		},
		Deliver: o.deliver, Now: a.Now, OnEvent: o.onEvent, IdleNote: o.idleNote,
		Launch: func(ctx context.Context, l *swarm.Lead, m team.Member, r swarm.SpawnRequest, beName string) (backend.Spec, error) {
			if beName != backend.InProcess {
				argv, env, err := o.paneArgv(m, r, o.session, leadKey)
				return backend.Spec{Argv: argv, Env: env}, err
			}
			m.TmuxPaneID, m.BackendType = backend.InProcess, backend.InProcess
			return backend.Spec{Run: func(ctx context.Context) error { return mates.Launch(ctx, l, m, r) }}, nil
		},
	})
	if err != nil {
		closeStores()
		return nil, err
	}
	lt.lead = lead
	lt.stores.Mail = lead.Mail() // the lead's tools send through it: it records what is owed an answer
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
	return teamtool.Tools(teamtool.Config{Teams: lt.stores.Teams, Mail: lt.stores.Mail, Tasks: lt.stores.Tasks, Lead: teamLead(lt),
		Self: func() teamtool.Self {
			return teamtool.Self{Team: lt.lead.Team(), Name: team.LeadName, Lead: true}
		},
		SubAgents: subSend, Now: now, Hooks: teamtool.Hooks{PlanDigest: lt.lead.PlanDigest, TaskGate: lt.hooks.TaskGate()}})
}

// teammates adapts the Lead to the Agent tool's Teammates.
type teammates struct{ lead *swarm.Lead }

func (t teammates) SpawnTeammate(ctx context.Context, r agenttool.TeammateRequest) (agenttool.TeammateInfo, error) {
	info, err := t.lead.Spawn(ctx, swarm.SpawnRequest{Name: r.Name, Description: r.Description, Prompt: r.Prompt,
		Model: r.Model, AgentType: r.AgentType, Mode: r.Mode, PlanModeRequired: r.PlanModeRequired, Cwd: r.Dir, Color: r.Color})
	if err != nil {
		return agenttool.TeammateInfo{}, err
	}
	return agenttool.TeammateInfo{AgentID: info.AgentID, Name: info.Name, Team: info.Team, Color: info.Color, Model: info.Model,
		Backend: info.Backend, PaneID: info.PaneID, PlanModeRequired: info.PlanModeRequired}, nil
}

// EnvTeammateCommand is --teammate-command's variable.
const EnvTeammateCommand = "TROUPE_TEAMMATE_COMMAND"

// EnvTeammateBin overrides the binary pane teammates run (default: this
// one); tests and wrappers set it.
const EnvTeammateBin = "TROUPE_TEAMMATE_BIN"

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
func (a *app) paneArgv(h *headless, home, cwd string) func(m team.Member, r swarm.SpawnRequest, session, leadKey string) ([]string, map[string]string, error) {
	return func(m team.Member, r swarm.SpawnRequest, session, leadKey string) ([]string, map[string]string, error) {
		if cmd := teammateCommand(a, h); cmd != "" {
			argv, env, err := claudeArgv(a, cmd, home, m, r, session)
			return withLeadKey(argv, leadKey), env, err
		}
		exe, err := a.selfArgv0()
		if err != nil {
			return nil, nil, err
		}
		argv := []string{exe, "--agent-id", m.AgentID, "--agent-name", m.Name, "--team-name", teamOf(m.AgentID),
			"--agent-color", m.Color, "--parent-session-id", session, "--home", home, "--cwd", cmp.Or(m.Cwd, cwd)}
		argv = withLeadKey(argv, leadKey)
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
		argv = a.withMCP(argv, env) // mcp.go: the lead's MCP servers
		return argv, env, nil
	}
}

// passThroughEnv are the variables a pane teammate gets from the lead:
// the providers' endpoints and credentials, proxies and the store root.
var passThroughEnv = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS"} // telemetry.go

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
	shut    time.Duration // how long a shutdown request waits for its answer
	keep    bool          // --keep-team: leave the team in place when the run ends
	command string        // the program pane teammates run instead of troupe (claude)
	mate    *teammateFlags
	trees   *worktreeFlags // --worktrees, --worktree-dir (worktrees.go)

	// Set by troupe demo, not by flags.
	answer   swarm.Answerer     // answers teammates' permission questions
	plans    swarm.PlanAnswerer // answers teammates' plans (the interactive lead)
	timeline io.Writer          // where the team's timeline goes (default stderr)
	onEvent  func(swarm.Event)  // sees every timeline event
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
	f.DurationVar(&t.shut, "shutdown-answer-timeout", swarm.DefaultShutdownAnswerTimeout, "with --agent-teams: how long the lead waits for a teammate's answer to a shutdown request before it kills the teammate and removes it from the team (the run then exits non-zero)")
	f.BoolVar(&t.keep, "keep-team", false, "with --agent-teams: leave the lead's team (its file, inboxes and task list) in place when the run ends; by default its teammates are stopped and the team is removed")
	f.StringVar(&t.command, "teammate-command", "", "with --agent-teams: run this `PROGRAM` as the pane teammates instead of troupe, with Claude Code's teammate flags (such as claude: a Claude Code teammate; needs a pane backend and the file store); also "+EnvTeammateCommand)
	t.mate = addTeammateFlags(root)
	t.trees = addWorktreeFlags(f)
	t.mate.getenv = a.Getenv
}

// leadTools returns the tools of a headless lead: the core tools, and
// with agent teams on the team tools, with the team runtime attached to
// bg (which closes it).
//
// A lead may use the team tools and spawn teammates without asking: they
// only coordinate, and every teammate's own calls pass its permissions.
func (a *app) leadTools(h *headless, cwd, session string, model llm.Model, approver *approve.Approver, bg *background) ([]tool.Tool, *approve.Approver, error) {
	fork, err := a.forkSubagents(h, cwd)
	if err != nil {
		return nil, nil, err
	}
	opts := kit.ToolOptions{Cwd: cwd, Registry: bg.reg, Model: model, ModelName: h.model, Approver: approver, Remote: bg.remote, Context: bg.ac,
		Transcripts: bg.tx, Parent: transcript.KindLead, WorktreeRoot: h.teams.trees.get().root, Fork: fork}
	if !a.teamsEnabled(h.teams.enabled) {
		tools, sub := kit.Tools(opts)
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
	bg.sess.SetDigestQuiet(h.teams.digest == digestQuiet)
	trees := kit.NewTeamWorktrees(h.teams.trees.get().all, cwd, h.teams.trees.get().root, bg.sess.Deliver) // worktrees.go
	// The timeline is ready before the team: newLeadTeam reports the backend.
	bg.stderr, bg.onTeamEvent = a.Stderr, h.teams.onEvent
	if h.teams.timeline != nil {
		bg.stderr = h.teams.timeline
	}
	lt, err := a.newLeadTeam(leadTeamOptions{h: h, cwd: cwd, session: session, model: model, approver: approver,
		answer: h.teams.answer, answerPlan: h.teams.plans, mode: mode, onEvent: trees.OnEvent(bg.sess.TeamEvent), deliver: bg.sess.Deliver, reg: bg.reg, tx: bg.tx, paneArgv: a.paneArgv(h, home, cwd), idleNote: trees.IdleNote})
	if err != nil {
		return nil, nil, err
	}
	bg.team = lt
	bg.sess.SetTeam(lt.lead)
	lt.trees = trees
	opts.Teammates = kit.IsolatedTeammates{Inner: teammates{lt.lead}, Team: lt.lead.Team, Trees: trees}
	tools, sub := kit.Tools(opts)
	return append(tools, teamTools(lt, sub, a.Now)...), kit.WithAllow(approver, append([]string{"Agent"}, swarm.TeamTools...)...), nil
}

// withLeadKey adds --lead-verify-key after the identity flags (argv[0]
// and the five flag pairs of PROTOCOL.md 10.3's order).
func withLeadKey(argv []string, key string) []string {
	if key == "" || len(argv) < 11 {
		return argv
	}
	out := append(append([]string(nil), argv[:11]...), "--lead-verify-key", key)
	return append(out, argv[11:]...)
}

// validate checks the lead's team flags before anything is opened.
func (t *teamFlags) validate(a *app) error {
	if err := t.checkAskTimeout(); err != nil {
		return err
	}
	if t.shut <= 0 {
		return usagef("--shutdown-answer-timeout %s: want a positive duration", t.shut)
	}
	if t.digest != digestNextInput && t.digest != digestQuiet {
		return usagef("--idle-digest %q: want %s or %s", t.digest, digestNextInput, digestQuiet)
	}
	if !a.teamsEnabled(t.enabled) && t.mate.teammateMode != "" {
		return usagef("--teammate-mode needs agent teams: add --agent-teams (or set %s=1)", EnvAgentTeams)
	}
	return nil
}

// checkAskTimeout refuses a --permission-answer-timeout that is not
// positive (a teammate would wait no time at all, or forever).
func (t *teamFlags) checkAskTimeout() error {
	if t.ask <= 0 {
		return usagef("--permission-answer-timeout %s: want a positive duration", t.ask)
	}
	return nil
}
