package agenttool

import (
	"context"

	coreagent "github.com/troupe-dev/troupe/agent"
	taskreg "github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
)

// forkDescription is added to the description when forks are on.
const forkDescription = `

Forks: a call without subagent_type (and without a name or an isolation) forks you: the fork starts with this whole conversation, your instructions and your tools, so give it only a directive (what to do and what to report), not the background. Use forks for side tasks whose intermediate output would clutter your context. A fork cannot start agents.`

// ForkType is the agent type of a fork, in the task list and results.
const ForkType = "fork"

// ForkDirectiveTag wraps a fork's directive in its first message.
const ForkDirectiveTag = "fork-directive"

// forkDirective is a fork's first prompt: what it is and its task.
func forkDirective(prompt string) string {
	return "<" + ForkDirectiveTag + ">\nYou are a fork of the agent whose conversation is above: you share its context, but you are a separate worker. " +
		"Do only the task below, without asking questions; you cannot start agents. When done, reply with a concise report of what you found or did: it is all your parent sees.\n\n" +
		prompt + "\n</" + ForkDirectiveTag + ">"
}

// fork runs the call as a fork of the calling agent: its conversation so
// far, system prompt and tools, plus the directive (Config.Fork).
func (t *Tool) fork(ctx context.Context, call tool.Call, in input) (tool.Result, bool, error) {
	parent, ok := coreagent.Caller(ctx)
	if !ok {
		return tool.Result{}, false, nil // not called from an agent's loop: an ordinary sub-agent
	}
	cfg, err := parent.Fork()
	if err != nil {
		return tool.Errorf("Agent: could not fork: %v", err), true, nil
	}
	bg := t.cfg.DefaultBackground
	if in.RunInBackground != nil {
		bg = *in.RunInBackground
	}
	if bg && t.cfg.Registry == nil {
		return tool.Errorf("Agent: run_in_background is not available in this session; run the fork in the foreground (run_in_background: false)"), true, nil
	}
	id := taskreg.NewID(taskreg.LocalAgent)
	tr := &tracker{}
	if bg {
		tr.update = func(u taskreg.Usage) {
			t.cfg.Registry.Update(id, func(s taskreg.State) taskreg.State {
				if d, ok := s.Detail.(*taskreg.Agent); ok && d.Usage != u {
					s.Detail = d.With(func(c *taskreg.Agent) { c.Usage = u })
				}
				return s
			})
		}
	}
	cfg.OnEvent = tr.observe
	if t.cfg.OnFork != nil {
		t.cfg.OnFork(string(id), &cfg)
	}
	ag, err := coreagent.New(cfg)
	if err != nil {
		return tool.Errorf("Agent: could not fork: %v", err), true, nil
	}
	in.Prompt = forkDirective(in.Prompt)
	in.SubagentType = ForkType
	spec := Spec{AgentID: string(id), Type: ForkType, Name: in.Name, Description: in.Description, Prompt: in.Prompt, Background: bg, Tools: cfg.Tools}
	if bg {
		res, err := t.background(call, id, in, spec, ag, tr, nil)
		return res, true, err
	}
	res, err := t.foreground(ctx, id, in, ag, tr, nil)
	return res, true, err
}

// refuseFork is the Agent tool's answer to a fork that calls it.
func refuseFork(ctx context.Context) (tool.Result, bool) {
	if parent, ok := coreagent.Caller(ctx); ok && parent.IsFork() {
		return tool.Errorf("Agent: you are a fork, and a fork cannot start agents (forks do not fork again): do the task yourself and report back"), true
	}
	return tool.Result{}, false
}
