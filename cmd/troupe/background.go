package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/session"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/bash"
	"github.com/troupe-dev/troupe/tool/fs"
	"github.com/troupe-dev/troupe/transcript"

	agenttool "github.com/troupe-dev/troupe/tool/agent"
	tasktool "github.com/troupe-dev/troupe/tool/task"
)

// background is the cmd side of a headless run: the session (package
// session: the lead's runs, its task registry and team) and what the
// command prints of it, through one subscription to the session's events.
type background struct {
	sess *session.Session
	reg  *task.Registry
	dir  string // the registry's output folder
	sub  *session.Subscription
	out  *eventWriter
	now  func() time.Time
	done chan struct{} // closed when the printer has printed every event

	// The agent team, when teams are on (swarm.go).
	team         *leadTeam
	stderr       io.Writer         // the team's timeline in text output
	onTeamEvent  func(swarm.Event) // sees every timeline event
	leadTimeline func(agent.Event) // the lead's tool calls on the timeline
	remote       agenttool.Remote  // remote agents, with a NATS store (remote.go)
	ac           *agentContext     // the lead's instructions and environment, for its sub-agents (context.go)
	tx           *transcripts      // the session's transcripts (transcript.go)
}

func newBackground(cwd, sessionID string, out *eventWriter, now func() time.Time, interactive bool) (*background, error) {
	dir, err := task.OutputDir("", projectSlug(cwd), sessionID)
	if err != nil {
		return nil, err
	}
	reg := task.New(task.Config{Dir: dir})
	local := filepath.Join(cwd, ".troupe", "settings.local.json") // where a person's rule changes are kept
	sess, err := session.New(session.Config{Registry: reg, Now: now, Interactive: interactive, RuleSource: local,
		SaveRule: func(b permission.Behavior, rule string, add bool) error {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if add {
				return settings.AddRule(ctx, local, b, rule)
			}
			return settings.RemoveRule(ctx, local, b, rule)
		}})
	if err != nil {
		return nil, err
	}
	b := &background{sess: sess, reg: reg, dir: dir, out: out, now: now, stderr: io.Discard, done: make(chan struct{})}
	b.sub = sess.Subscribe(false)
	go b.print()
	return b, nil
}

// print writes the session's events as they come: stream-json lines, the
// team's timeline; it ends when the subscription is closed and drained.
func (b *background) print() {
	defer close(b.done)
	for {
		e, err := b.sub.Next(context.Background())
		if err != nil {
			return
		}
		switch {
		case e.Agent != nil && e.TaskID != "": // a backgrounded turn's: its task reports it
		case e.Agent != nil:
			b.out.event(*e.Agent)
			if b.team != nil {
				if b.leadTimeline == nil {
					b.leadTimeline = toolTimeline(team.LeadName, b.now, b.teamEvent)
				}
				b.leadTimeline(*e.Agent)
			}
		case e.Task != nil:
			if se, ok := e.Task.StreamJSON(); ok {
				b.out.task(se)
			}
		case e.Team != nil:
			b.teamEvent(*e.Team)
		}
	}
}

// flush waits until every event so far is printed; nothing is printed
// after it.
func (b *background) flush() {
	b.sub.Close()
	<-b.done
}

// pruneOutputDir removes a task output folder (<tmp>/troupe-<uid>/<project>/
// <session>/tasks) when the run left nothing in it, and then its session
// and project folders when they are empty too: a run that started no
// background task leaves no trace in the temporary folder. Output files
// of tasks that ran are kept.
func pruneOutputDir(dir string) {
	for range 3 {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// close stops what is still running (no orphan shells) and waits for it.
func (b *background) close() {
	if b.team != nil {
		b.team.close()
	}
	b.flush()
	b.sess.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b.reg.Close(ctx)
	pruneOutputDir(b.dir)
}

// projectSlug names a working folder in the output folder's path.
func projectSlug(cwd string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '-'
	}, cwd), "-")
}

// endTeam ends the lead's team with the run: its teammates are stopped
// and, unless keep, the team is removed (swarm.Lead.EndSession). It runs
// even when the run was interrupted, on a context of its own.
func (b *background) endTeam(keep bool) {
	if b.team == nil || keep {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A team left in place is on the timeline as a warning.
	_, _ = b.team.lead.EndSession(ctx)
}

// teamEvent reports one line of the team's timeline: a stream-json event,
// or a line on stderr in the text formats. Only the printer calls it.
func (b *background) teamEvent(e swarm.Event) {
	if b.onTeamEvent != nil {
		b.onTeamEvent(e)
	}
	if b.out.format == "stream-json" {
		b.out.line(struct {
			Type    string `json:"type"`
			Subtype string `json:"subtype"`
			Session string `json:"session_id"`
			Agent   string `json:"agent"`
			Kind    string `json:"kind"`
			Text    string `json:"text"`
		}{"system", "team_event", b.out.session, e.Agent, e.Kind, e.Text})
		return
	}
	fmt.Fprintf(b.stderr, "%s %-10s %s\n", e.Time.Format("15:04:05.000"), termtext.Line(e.Agent), termtext.Clean(e.Text))
}

// toolOptions configure coreTools.
type toolOptions struct {
	cwd       string
	reg       *task.Registry
	model     llm.Model
	modelName string
	approver  agent.Approver
	// teammates, when set, makes a named Agent call spawn a teammate.
	teammates agenttool.Teammates
	// remote, when set, runs Agent calls with isolation "remote" on
	// remote workers (remote.go).
	remote agenttool.Remote
	// ac, when set, gives sub-agents the project instructions and the
	// environment (context.go).
	ac *agentContext
	// tx, when set, keeps each sub-agent's transcript, a sidechain of
	// parent (transcript.go).
	tx     *transcripts
	parent string
	// worktreeRoot is where agents' worktrees go; "" means beside the
	// repository (worktrees.go).
	worktreeRoot string
	fork         bool // --fork-subagents
}

// coreTools returns the tools of an agent rooted at cwd: the file tools,
// Bash (with background shells in reg), TaskOutput, TaskStop and Agent
// (sub-agents on the same model and permissions), and separately the
// SendMessage tool that addresses its background sub-agents (a team
// member's SendMessage falls through to it).
func coreTools(o toolOptions) (tools []tool.Tool, subSend tool.Tool) {
	cwd, reg := o.cwd, o.reg
	newBash := func(agentID string) tool.Tool {
		return bash.New(bash.Config{Dir: cwd,
			Background: tasktool.BashBackground(reg, tasktool.BashOptions{AgentID: agentID, Dir: cwd})})
	}
	var at *agenttool.Tool // set below, before any call
	byName := func(name string) (task.ID, bool) { return at.Lookup(name) }
	base := append(fs.All(fileConfig(cwd, o.approver)), newBash(""),
		tasktool.NewOutput(tasktool.Config{Registry: reg, Resolve: byName}), tasktool.NewStop(reg, byName))
	if st := o.ac.skillTool(); st != nil {
		base = append(base, st) // sub-agents get it too
	}
	// mcp.go: every agent gets the MCP servers' tools
	base = append(base, o.ac.mcpTools()...)
	parent, _ := tool.NewRegistry(base...) // the names are unique
	var types []brief.Agent                // agents.go
	if o.ac != nil {
		types = o.ac.agents
	}
	at = agenttool.New(agenttool.Config{Tools: parent, Registry: reg, Teammates: o.teammates, Remote: o.remote, Agents: agentDefs(types),
		Worktrees: &worktrees{cwd: cwd, team: SubAgentWorktrees, root: o.worktreeRoot}, Fork: o.fork,
		OnFork: func(id string, cfg *agent.Config) {
			cfg.Transcript = o.tx.writer(id, transcript.KindSubAgent, o.parent)
		},
		Factory: func(_ context.Context, s agenttool.Spec) (agent.Config, error) {
			var ts []tool.Tool
			for _, name := range s.Tools.Names() {
				t, _ := s.Tools.Get(name)
				if name == "Bash" {
					t = newBash(s.AgentID) // its background shells end with the sub-agent
				}
				ts = append(ts, t)
			}
			tools, err := tool.NewRegistry(ts...)
			if err != nil {
				return agent.Config{}, err
			}
			ap := o.approver
			if s.Dir != "" { // isolation "worktree" (worktrees.go)
				if tools, ap, err = toolsIn(s.Dir, tools, ap, reg, s.AgentID); err != nil {
					return agent.Config{}, err
				}
			}
			modelName := o.modelName
			if s.Model != "" && s.Model != "inherit" { // the call's model, else its definition's
				modelName = s.Model
			}
			cfg := agent.Config{Model: o.model, ModelName: modelName, Tools: tools, Approver: ap,
				System: "You are a " + s.Type + " sub-agent. Do the task you are given, then reply with a concise report of what you found or did: it is all the caller sees."}
			if o.ac != nil {
				role, custom := subagentRole(s.Agent) // agents.go
				if cfg.System, err = o.ac.system(role, brief.Vars{Type: s.Type}, custom); err != nil {
					return agent.Config{}, err
				}
				cfg.Environment = o.ac.environment
				cfg.Hooks = o.ac.hooks.forAgent(string(s.AgentID), true)
			}
			if s.Dir != "" {
				cfg.System += worktreeNote(s.Dir)
			}
			if w := o.tx.writer(string(s.AgentID), transcript.KindSubAgent, o.parent); w != nil {
				cfg.Transcript = w
			}
			return cfg, nil
		}})
	return append(base, at), agenttool.NewSendMessage(at)
}

// pathJudge is the part of a permission layer the file tools consult
// after the approval (approve.Approver and swarm.Approver have it).
type pathJudge interface {
	Confine(tool, abs, real string) error
	Withholds(abs string) bool
}

// fileConfig returns the file tools' configuration for an agent rooted
// at cwd whose calls ap approves: the tools check the real path of what
// they open with ap and keep what its Read deny rules cover out of Glob
// and Grep results.
func fileConfig(cwd string, ap agent.Approver) fs.Config {
	cfg := fs.Config{Root: cwd}
	if j, ok := ap.(pathJudge); ok {
		cfg.Confine, cfg.Withhold = j.Confine, j.Withholds
	}
	return cfg
}
