package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/bash"
	"github.com/troupe-dev/troupe/tool/fs"

	agenttool "github.com/troupe-dev/troupe/tool/agent"
	tasktool "github.com/troupe-dev/troupe/tool/task"
)

// background is the background work of a headless run: the task registry
// behind background shells and sub-agents, and the delivery of their
// notifications to the lead.
type background struct {
	reg  *task.Registry
	dir  string // the registry's output folder
	sub  *task.Subscription
	out  *eventWriter
	now  func() time.Time
	lead *agent.Agent // set before the lead's first run

	// The agent team, when teams are on (swarm.go).
	team   *leadTeam
	stderr io.Writer     // the team's timeline in text output
	wake   chan struct{} // 1-slot: the team delivered input for the lead
	// digestQuiet holds idle notifications until the team is quiet.
	digestQuiet  bool
	onTeamEvent  func(swarm.Event) // sees every timeline event
	leadTimeline func(agent.Event) // the lead's tool calls on the timeline
	timelineMu   sync.Mutex        // serializes timeline lines
	remote       agenttool.Remote  // remote agents, with a NATS store (remote.go)
	ac           *agentContext     // the lead's instructions and environment, for its sub-agents (context.go)
}

func newBackground(cwd, session string, out *eventWriter, now func() time.Time) (*background, error) {
	dir, err := task.OutputDir("", projectSlug(cwd), session)
	if err != nil {
		return nil, err
	}
	reg := task.New(task.Config{Dir: dir})
	return &background{reg: reg, dir: dir, sub: reg.Subscribe(), out: out, now: now, stderr: io.Discard, wake: make(chan struct{}, 1)}, nil
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
	b.sub.Close()
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

// handle reports one task event: a stream-json line, and the task's
// notification queued for the lead (delivered at its next tool-round
// boundary, or as the next run's input).
func (b *background) handle(e task.Event) {
	if se, ok := e.StreamJSON(); ok {
		b.out.task(se)
	}
	if e.Notification != "" && b.lead != nil {
		b.lead.Send(systemNotification(e.Notification))
	}
}

// drain handles every queued event. The lead's event hook calls it, so
// notifications reach a working lead between its tool rounds.
func (b *background) drain() {
	for {
		e, ok := b.sub.TryNext()
		if !ok {
			return
		}
		b.handle(e)
	}
}

// active reports whether a task is still running, or has ended but not
// yet produced its notification (the two happen in separate steps).
func (b *background) active() bool {
	for _, s := range b.reg.List() {
		if s.Status.Active() || !s.Notified {
			return true
		}
	}
	return false
}

// run runs the lead on prompt and then keeps it going while background
// work is active, its team is not quiet, or notifications and teammate
// messages wait for it, so a headless run ends only after every task it
// started has finished and been reported and its teammates are idle. The
// result sums the runs; its text is the last run's.
func (b *background) run(ctx context.Context, prompt string) (agent.Result, error) {
	start := b.now()
	res, err := b.lead.Run(ctx, prompt)
	total := res
	for err == nil && !res.Interrupted && res.StopReason != agent.StopMaxTurns {
		// Look at the tasks before draining: a task's notification is
		// queued when it is marked notified, so nothing slips between.
		active := b.active()
		b.drain()
		quiet := true
		if b.team != nil {
			if quiet, err = b.team.lead.Quiet(ctx); err != nil {
				break
			}
			// Idle notifications come as one digest with the lead's next
			// input, or on their own once the whole team is quiet.
			if (b.lead.Pending() > 0 && !b.digestQuiet) || (quiet && !active) {
				if d := b.team.lead.TakeDigest(); d != "" {
					b.lead.Send(d)
				}
			}
		}
		if b.lead.Pending() > 0 {
			res, err = b.lead.Run(ctx, "")
			total.Usage = total.Usage.Add(res.Usage)
			total.Calls += res.Calls
			total.ToolUses += res.ToolUses
			total.Text, total.StopReason, total.Interrupted = res.Text, res.StopReason, res.Interrupted
			continue
		}
		if !active && quiet {
			break
		}
		if err = b.wait(ctx); err != nil {
			break
		}
	}
	total.Duration = b.now().Sub(start)
	if err == nil && b.team != nil {
		// Exit 0 means the team ended as the lead intended.
		if ps := b.team.lead.Problems(); len(ps) > 0 {
			err = fmt.Errorf("the team did not end cleanly: %s", strings.Join(ps, "; "))
		}
	}
	return total, err
}

// wait waits for a task event, input from the team, or a change in the
// team. The lead is woken by the stores' watches of the team file and the
// task list (a teammate's last step, marking itself idle in the team file,
// reaches it through no inbox); it still looks again every 30 s, for the
// one thing no store tells (a Claude Code teammate silent past
// swarm.DefaultReplyTimeout), and every second when the stores cannot
// watch.
func (b *background) wait(ctx context.Context) error {
	if b.team == nil {
		e, err := b.sub.Next(ctx)
		if err == nil {
			b.handle(e)
		}
		return err
	}
	look := 30 * time.Second
	if !b.team.lead.Watching() {
		look = time.Second
	}
	wctx, cancel := context.WithTimeout(ctx, look)
	defer cancel()
	go func() {
		select {
		case <-b.wake:
		case <-b.team.lead.Changed():
		case <-wctx.Done():
		}
		cancel()
	}()
	e, err := b.sub.Next(wctx)
	if err == nil {
		b.handle(e)
		return nil
	}
	return ctx.Err()
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

// deliver hands the lead's model input from its team.
func (b *background) deliver(text string) {
	if b.lead != nil {
		b.lead.Send(text)
	}
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// observe puts the lead's tool calls on the team's timeline.
func (b *background) observe(e agent.Event) {
	if b.team != nil {
		if b.leadTimeline == nil {
			b.leadTimeline = toolTimeline(team.LeadName, b.now, b.teamEvent)
		}
		b.leadTimeline(e)
	}
}

// teamEvent reports one line of the team's timeline: a stream-json event,
// or a line on stderr in the text formats.
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
	b.timelineMu.Lock()
	defer b.timelineMu.Unlock()
	fmt.Fprintf(b.stderr, "%s %-10s %s\n", e.Time.Format("15:04:05.000"), termtext.Line(e.Agent), termtext.Clean(e.Text))
}

// systemNotification wraps a task notification so that the model tells it
// from user input.
func systemNotification(n string) string {
	return "<system-reminder>\n[SYSTEM NOTIFICATION - NOT USER INPUT] A background task you started has changed state. This is not a message from the user; act on it as part of your own work.\n" +
		n + "\n</system-reminder>"
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
	parent, _ := tool.NewRegistry(base...) // the names are unique
	at = agenttool.New(agenttool.Config{Tools: parent, Registry: reg, Teammates: o.teammates, Remote: o.remote,
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
			cfg := agent.Config{Model: o.model, ModelName: o.modelName, Tools: tools, Approver: o.approver,
				System: "You are a " + s.Type + " sub-agent. Do the task you are given, then reply with a concise report of what you found or did: it is all the caller sees."}
			if o.ac != nil {
				if cfg.System, err = o.ac.system(brief.RoleSubAgent, brief.Vars{Type: s.Type}, ""); err != nil {
					return agent.Config{}, err
				}
				cfg.Environment = o.ac.environment
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
