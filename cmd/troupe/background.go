package main

import (
	"context"
	"strings"
	"time"
	"unicode"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/task"
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
	sub  *task.Subscription
	out  *eventWriter
	now  func() time.Time
	lead *agent.Agent // set before the lead's first run
}

func newBackground(cwd, session string, out *eventWriter, now func() time.Time) (*background, error) {
	dir, err := task.OutputDir("", projectSlug(cwd), session)
	if err != nil {
		return nil, err
	}
	reg := task.New(task.Config{Dir: dir})
	return &background{reg: reg, sub: reg.Subscribe(), out: out, now: now}, nil
}

// close stops what is still running (no orphan shells) and waits for it.
func (b *background) close() {
	b.sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b.reg.Close(ctx)
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
// work is active or notifications wait for it, so a headless run ends only
// after every task it started has finished and been reported. The result
// sums the runs; its text is the last run's.
func (b *background) run(ctx context.Context, prompt string) (agent.Result, error) {
	start := b.now()
	res, err := b.lead.Run(ctx, prompt)
	total := res
	for err == nil && !res.Interrupted && res.StopReason != agent.StopMaxTurns {
		// Look at the tasks before draining: a task's notification is
		// queued when it is marked notified, so nothing slips between.
		active := b.active()
		b.drain()
		if b.lead.Pending() > 0 {
			res, err = b.lead.Run(ctx, "")
			total.Usage = total.Usage.Add(res.Usage)
			total.Calls += res.Calls
			total.ToolUses += res.ToolUses
			total.Text, total.StopReason, total.Interrupted = res.Text, res.StopReason, res.Interrupted
			continue
		}
		if !active {
			break
		}
		e, werr := b.sub.Next(ctx)
		if werr != nil {
			err = werr
			break
		}
		b.handle(e)
	}
	total.Duration = b.now().Sub(start)
	return total, err
}

// systemNotification wraps a task notification so that the model tells it
// from user input.
func systemNotification(n string) string {
	return "<system-reminder>\n[SYSTEM NOTIFICATION - NOT USER INPUT] A background task you started has changed state. This is not a message from the user; act on it as part of your own work.\n" +
		n + "\n</system-reminder>"
}

// coreToolList returns the tools of a headless agent rooted at cwd: the
// file tools, Bash (with background shells in reg), TaskOutput, TaskStop
// and Agent (sub-agents on the same model and permissions).
func coreToolList(cwd string, reg *task.Registry, model llm.Model, modelName string, approver agent.Approver) []tool.Tool {
	newBash := func(agentID string) tool.Tool {
		return bash.New(bash.Config{Dir: cwd,
			Background: tasktool.BashBackground(reg, tasktool.BashOptions{AgentID: agentID, Dir: cwd})})
	}
	var at *agenttool.Tool // set below, before any call
	byName := func(name string) (task.ID, bool) { return at.Lookup(name) }
	base := append(fs.All(fs.Config{Root: cwd}), newBash(""),
		tasktool.NewOutput(tasktool.Config{Registry: reg, Resolve: byName}), tasktool.NewStop(reg, byName))
	parent, _ := tool.NewRegistry(base...) // the names are unique
	at = agenttool.New(agenttool.Config{Tools: parent, Registry: reg,
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
			return agent.Config{Model: model, ModelName: modelName, Tools: tools, Approver: approver,
				System: "You are a " + s.Type + " sub-agent. Do the task you are given, then reply with a concise report of what you found or did: it is all the caller sees."}, nil
		}})
	return append(base, at, agenttool.NewSendMessage(at))
}
