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

	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/cli/mate"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/asktool"
	"github.com/troupe-dev/troupe/tool/sessiontool"
	"github.com/troupe-dev/troupe/transcript"
)

// teamsEnabled reports whether agent teams are on.
func (a *app) teamsEnabled(flag bool) bool { return mate.TeamsEnabled(flag, a.Getenv) }

// leadTeam is the team runtime of a headless lead, with the stores it
// opened.
type leadTeam struct {
	*kit.LeadTeam
	close func()
}

// newLeadTeam opens the stores and the backends of a lead and builds its
// team (kit.NewLeadTeam).
func (a *app) newLeadTeam(h *headless, mode string, c kit.LeadTeamConfig) (*leadTeam, error) {
	sess, err := a.Open()
	if err != nil {
		return nil, err
	}
	closeStores := func() { _ = sess.Release() }
	if c.Backend, c.Fallback, c.BackendReason, err = a.pickBackend(mode); err != nil {
		closeStores()
		return nil, err
	}
	c.Stores, c.ModelName, c.Hooks = kitStores(sess.Stores), h.model.Name, a.hooks
	c.Queuing, c.ShutdownAnswerTimeout = teammateCommand(a, h) != "", h.teams.shut
	c.WrapMail = a.tel.leadMail // telemetry.go: trace context on what it sends
	c.Reap = a.reapAgent        // procs.go: what a dead pane teammate left running
	c.Mates.Run, c.Mates.NoInstr, c.Mates.AskTimeout, c.Mates.Telemetry = a.kitRun(), h.noInstr, h.teams.ask, a.tel.mate
	lt, err := kit.NewLeadTeam(c)
	if err != nil {
		closeStores()
		return nil, err
	}
	return &leadTeam{LeadTeam: lt, close: func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = lt.Lead.Close(ctx)
		closeStores()
	}}, nil
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
			return mate.ClaudeArgv(cmd, home, m, r, session, leadKey, a.Getenv)
		}
		exe, err := a.selfArgv0()
		if err != nil {
			return nil, nil, err
		}
		argv := append(mate.Argv(exe, m, session, leadKey), "--home", home, "--cwd", cmp.Or(m.Cwd, cwd))
		if r.PlanModeRequired {
			argv = append(argv, "--plan-mode-required")
		}
		if m.Mode != "" {
			argv = append(argv, "--permission-mode", m.Mode)
		}
		if h.model.Provider != "" {
			argv = append(argv, "--provider", h.model.Provider)
		}
		if h.model.Script != "" {
			script, err := filepath.Abs(h.model.Script)
			if err != nil {
				return nil, nil, err
			}
			argv = append(argv, "--script", script)
		}
		if m.Model != "" {
			argv = append(argv, "--model", m.Model)
		}
		// The lead's working folders and rules, as its in-process
		// teammates have them (their approver is the lead's).
		for _, d := range h.perm.AddDirs {
			if !filepath.IsAbs(d) { // as agentflags reads it: from the lead's folder
				wd, err := a.Getwd()
				if err != nil {
					return nil, nil, err
				}
				d = filepath.Join(wd, d)
			}
			argv = append(argv, "--add-dir", filepath.Clean(d))
		}
		for _, r := range h.perm.Allowed {
			argv = append(argv, "--allowedTools", r)
		}
		for _, r := range h.perm.Disallowed {
			argv = append(argv, "--disallowedTools", r)
		}
		if h.teams.ask > 0 && h.teams.ask != swarm.DefaultAskTimeout {
			argv = append(argv, "--permission-answer-timeout", h.teams.ask.String())
		}
		env := map[string]string{mate.EnvAgentTeams: "1"}
		for _, k := range passThroughEnv {
			env[k] = a.Getenv(k) // an unset one masks an ambient value
		}
		// The same store as the lead's (its secrets in the environment,
		// not on the command line).
		senv, err := a.StoreEnv()
		if err != nil {
			return nil, nil, err
		}
		for _, kv := range senv {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		for k, v := range a.leadEnv() { // leadgone.go: it stops when this process is gone
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

// teamFlags are the agent-team flags: the lead's, and a teammate
// process's identity (teammate_flags.go).
type teamFlags struct {
	enabled bool
	digest  string // when idle notifications reach the lead
	ask     time.Duration
	shut    time.Duration // how long a shutdown request waits for its answer
	keep    bool          // --keep-team: leave the team in place when the run ends
	// --explicit-teams: offer the lead TeamCreate and TeamDelete (as
	// the setting teams.explicit does); by default a named Agent call
	// spawns into the session's own team.
	explicit bool
	command  string // the program pane teammates run instead of troupe (claude)
	mate     *mate.Flags
	trees    *worktreeFlags // --worktrees, --worktree-dir (worktrees.go)

	// Set by troupe demo, not by flags.
	answer swarm.Answerer     // answers teammates' permission questions
	plans  swarm.PlanAnswerer // answers teammates' plans (the interactive lead)
	// questions answers teammates' AskUserQuestion calls (the
	// interactive lead's person).
	questions swarm.QuestionAnswerer
	timeline  io.Writer         // where the team's timeline goes (default stderr)
	onEvent   func(swarm.Event) // sees every timeline event
}

// Values of --idle-digest.
const (
	digestNextInput = "next-input"
	digestQuiet     = "quiet"
)

// addTeamFlags puts the lead's agent-team flags on the root.
func (a *app) addTeamFlags(root *cobra.Command, t *teamFlags) {
	f := root.Flags()
	f.BoolVar(&t.enabled, "agent-teams", false, "with -p: let the agent lead a team (teammates through the Agent tool with a name, in the session's own team; SendMessage; the shared task list); also "+mate.EnvAgentTeams+"=1")
	f.StringVar(&t.digest, "idle-digest", digestNextInput, "with --agent-teams: when teammates' idle notifications reach the lead, as one digest: "+digestNextInput+" (with its next input, or once the team is quiet) or "+digestQuiet+" (only once the whole team is quiet)")
	f.DurationVar(&t.ask, "permission-answer-timeout", swarm.DefaultAskTimeout, "teammates: how long a permission request waits for the lead's answer before the call is denied")
	f.DurationVar(&t.shut, "shutdown-answer-timeout", swarm.DefaultShutdownAnswerTimeout, "with --agent-teams: how long the lead waits for a teammate's answer to a shutdown request before it kills the teammate and removes it from the team (the run then exits non-zero)")
	f.BoolVar(&t.keep, "keep-team", false, "with --agent-teams: leave the lead's team (its file, inboxes and task list) in place when the run ends; by default its teammates are stopped and the team is removed")
	f.BoolVar(&t.explicit, "explicit-teams", false, "with --agent-teams: offer the lead TeamCreate and TeamDelete (also the setting teams.explicit: true); by default a named Agent call spawns the teammate into the session's own team, session-<8 hex>, with no TeamCreate")
	f.StringVar(&t.command, "teammate-command", "", "with --agent-teams: run this `PROGRAM` as the pane teammates instead of troupe, with Claude Code's teammate flags (such as claude: a Claude Code teammate; needs a pane backend and the file store); also "+EnvTeammateCommand)
	t.mate = mate.Add(root, a.Getenv)
	t.trees = addWorktreeFlags(f)
}

// explicitTeams reports whether the lead's team is explicit (TeamCreate
// and TeamDelete offered): --explicit-teams, or the setting
// teams.explicit true.
func (a *app) explicitTeams(h *headless, cwd string) (bool, error) {
	if h.teams.explicit {
		return true, nil
	}
	home, err := a.Home()
	if err != nil {
		return false, err
	}
	return settingsExplicitTeams(settings.Files(home, cwd)) // settings_keys.go
}

// leadTools returns the tools of a headless lead: the core tools, and
// with agent teams on the team tools, with the team runtime attached to
// bg (which closes it).
//
// A lead may use the team tools and spawn teammates without asking: they
// only coordinate, and every teammate's own calls pass its permissions.
func (a *app) leadTools(h *headless, cwd, session string, model llm.Model, approver *approve.Approver, bg *background, wf *kit.WorkflowOptions) ([]tool.Tool, *approve.Approver, error) {
	fork, err := a.forkSubagents(h, cwd)
	if err != nil {
		return nil, nil, err
	}
	opts := kit.ToolOptions{Cwd: cwd, Registry: bg.reg, Model: model, ModelName: h.model.Name, Approver: approver, Remote: bg.remote, Context: bg.ac,
		Transcripts: bg.tx, Parent: transcript.KindLead, WorktreeRoot: h.teams.trees.get().root, Fork: fork,
		ParentMode: bg.sess.Mode, // sub-agents never run wider than the lead is now
		Workflows:  wf}
	// The lead may ask its person; sub-agents, which have none, may not
	// (kit.Tools leaves AskUserQuestion out of theirs).
	askTool := asktool.New(team.LeadName, bg.questions)
	if !a.teamsEnabled(h.teams.enabled) {
		tools, sub := kit.Tools(opts)
		return append(append(tools, sub, askTool), a.sessionTools(h, cwd, approver, bg)...), approver, nil
	}
	if cmd := teammateCommand(a, h); cmd != "" {
		if h.teams.mate.TeammateMode == backend.ModeInProcess {
			return nil, nil, cli.Usagef("--teammate-command %s runs teammates in panes: it needs --teammate-mode tmux, iterm2 or auto inside one", cmd)
		}
		if spec, err := a.StoreSpec(); err != nil {
			return nil, nil, err
		} else if spec.URL != "" {
			return nil, nil, cli.Usagef("--teammate-command %s: Claude Code teammates share the team through files; use the file store, not %s", cmd, spec.URL)
		}
	}
	home, err := a.Home()
	if err != nil {
		return nil, nil, err
	}
	mode := h.teams.mate.TeammateMode
	if mode == "" {
		if mode, err = settingsTeammateMode(settings.Files(home, cwd)); err != nil {
			return nil, nil, err
		}
	}
	window, err := settingsTeammateWindow(settings.Files(home, cwd))
	if err != nil {
		return nil, nil, err
	}
	explicit, err := a.explicitTeams(h, cwd)
	if err != nil {
		return nil, nil, err
	}
	bg.sess.SetDigestQuiet(h.teams.digest == digestQuiet)
	trees := kit.NewTeamWorktrees(h.teams.trees.get().all, cwd, h.teams.trees.get().root, bg.sess.Deliver) // worktrees.go
	// The timeline is ready before the team: newLeadTeam reports the backend.
	bg.stderr, bg.onTeamEvent = a.Stderr, h.teams.onEvent
	if h.teams.timeline != nil {
		bg.stderr = h.teams.timeline
	}
	lt, err := a.newLeadTeam(h, mode, kit.LeadTeamConfig{Session: session, Approver: approver, ModeNow: bg.sess.Mode,
		Mates:  kit.InProcess{Cwd: cwd, Model: model, Approver: approver, Transcripts: bg.tx},
		Answer: h.teams.answer, AnswerPlan: h.teams.plans, AnswerQuestions: h.teams.questions, OnEvent: trees.OnEvent(bg.sess.TeamEvent), Deliver: bg.sess.Deliver,
		Registry: bg.reg, PaneArgv: a.paneArgv(h, home, cwd), IdleNote: trees.IdleNote, Trees: trees, Window: window, Explicit: explicit})
	if err != nil {
		return nil, nil, err
	}
	bg.team = lt
	bg.sess.SetTeam(lt.Lead)
	opts.Teammates = lt.Teammates()
	tools, sub := kit.Tools(opts)
	tools = append(append(tools, askTool), a.sessionTools(h, cwd, approver, bg)...)
	return append(tools, lt.Tools(sub, a.Now)...), kit.WithAllow(approver, append([]string{"Agent"}, swarm.TeamTools...)...), nil
}

// sessionTools are the lead's tools that move its whole session
// (tool/sessiontool): EnterPlanMode, and EnterWorktree and ExitWorktree
// over the session's working folder (kit.Workdir, which the lead's folder
// tools follow: leadConfig wraps them and hands it the lead's approver).
func (a *app) sessionTools(h *headless, cwd string, approver *approve.Approver, bg *background) []tool.Tool {
	reg := bg.reg
	bg.wd = kit.NewWorkdir(cwd, h.teams.trees.get().root, func(dir string) map[string]tool.Tool {
		return kit.FolderToolsIn(dir, approver, reg)
	})
	enter, exit := sessiontool.NewWorktreeTools(bg.wd)
	return []tool.Tool{sessiontool.NewPlanMode(bg.sess), enter, exit}
}

// validate checks the lead's team flags before anything is opened.
func (t *teamFlags) validate(a *app) error {
	if err := t.checkAskTimeout(); err != nil {
		return err
	}
	if t.shut <= 0 {
		return cli.Usagef("--shutdown-answer-timeout %s: want a positive duration", t.shut)
	}
	if t.digest != digestNextInput && t.digest != digestQuiet {
		return cli.Usagef("--idle-digest %q: want %s or %s", t.digest, digestNextInput, digestQuiet)
	}
	if !a.teamsEnabled(t.enabled) && t.mate.TeammateMode != "" {
		return cli.Usagef("--teammate-mode needs agent teams: add --agent-teams (or set %s=1)", mate.EnvAgentTeams)
	}
	return nil
}

// checkAskTimeout refuses a --permission-answer-timeout that is not
// positive (a teammate would wait no time at all, or forever).
func (t *teamFlags) checkAskTimeout() error {
	if t.ask <= 0 {
		return cli.Usagef("--permission-answer-timeout %s: want a positive duration", t.ask)
	}
	return nil
}
