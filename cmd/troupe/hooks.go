package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/hooks"
	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/audit"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/session"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/transcript"

	teamtool "github.com/troupe-dev/troupe/tool/team"
)

// hookSet is the hooks of one run, read once when it starts: a settings
// file changed during the run is reported, never used (an agent cannot
// install a hook and have it run in the same breath).
type hookSet struct {
	runner  hooks.Runner                 // without Config: each run takes cfg's
	cfg     atomic.Pointer[hooks.Config] // replaced only by review (/hooks)
	home    string
	session string
	cwd     string
	tdir    string // the session's transcript folder
	audit   *audit.Log
	warnW   io.Writer
	mode    func() string // the permission mode, for hook input

	warnMu   sync.Mutex   // orders warning lines
	notify   func(string) // guarded by warnMu; replaces warnW when set (the interactive lead's timeline)
	reported atomic.Bool
}

// settingsPaths returns the paths of the settings files troupe merges.
func settingsPaths(home, cwd string) []string {
	var out []string
	for _, f := range settings.Files(home, cwd) {
		out = append(out, f.Path)
	}
	return out
}

// openHooks reads the hooks of the settings files for a session in cwd.
// A malformed hooks block stops the run before any model call.
func (a *app) openHooks(cwd, session string, log *audit.Log, warn io.Writer) (*hookSet, error) {
	home, err := a.home()
	if err != nil {
		return nil, err
	}
	c, err := hooks.Load(settingsPaths(home, cwd))
	if err != nil {
		return nil, err
	}
	hs := &hookSet{runner: hooks.Runner{Dir: cwd, Now: a.Now}, home: home, session: session, cwd: cwd,
		tdir: transcript.Dir(home, session), audit: log, warnW: warn}
	hs.cfg.Store(c)
	for _, w := range c.Warnings {
		hs.warn(w)
	}
	a.hooks = hs // every agent context made from here on runs them
	return hs, nil
}

func (hs *hookSet) warn(msg string) {
	hs.warnMu.Lock()
	notify := hs.notify
	if notify == nil && hs.warnW != nil {
		fmt.Fprintf(hs.warnW, "troupe: hook warning: %s\n", termtext.Line(msg)) // one write: lines stay whole
	}
	hs.warnMu.Unlock()
	if notify != nil { // outside the lock: a callback
		notify("hook warning: " + termtext.Line(msg))
	}
}

// warnToTimeline sends later warnings to the session's timeline instead
// of the writer (the interactive lead, whose terminal is its screen's).
func (hs *hookSet) warnToTimeline(s *session.Session, now func() time.Time) {
	hs.warnMu.Lock()
	defer hs.warnMu.Unlock()
	hs.notify = func(msg string) {
		s.TeamEvent(swarm.Event{Time: now(), Agent: team.LeadName, Kind: swarm.EventWarning, Text: msg})
	}
}

// active reports whether ev has hooks; false for a nil set.
func (hs *hookSet) active(ev hooks.Event) bool { return hs != nil && hs.cfg.Load().Has(ev) }

// run runs ev's hooks for agentName, with the input's common fields
// filled in; it writes the runs to the audit log and the warnings out.
func (hs *hookSet) run(ctx context.Context, agentName string, in hooks.Input) hooks.Outcome {
	in.SessionID, in.Cwd = hs.session, hs.cwd
	in.TranscriptPath = filepath.Join(hs.tdir, transcript.FileName(agentName))
	if hs.mode != nil && in.PermissionMode == "" {
		in.PermissionMode = hs.mode()
	}
	r := hs.runner
	r.Config = hs.cfg.Load()
	out := r.Run(ctx, in)
	for _, r := range out.Runs {
		r.Agent = agentName
		if hs.audit != nil {
			if err := hs.audit.Append(r); err != nil {
				hs.warn(fmt.Sprintf("audit: %v", err))
			}
		}
	}
	for _, w := range out.Warnings {
		hs.warn(w)
	}
	if !hs.reported.Load() && r.Config.Changed() && !hs.reported.Swap(true) {
		hs.warn("the hooks in the settings files changed during this run; they take effect at the next run (or after review with /hooks in the interactive lead)")
	}
	return out
}

// forAgent returns the agent.Hooks of one agent; subagent makes its Stop
// event SubagentStop. A nil set gives nil (no hooks at all).
func (hs *hookSet) forAgent(name string, subagent bool) agent.Hooks {
	if hs == nil {
		return nil
	}
	stop := hooks.Stop
	if subagent {
		stop = hooks.SubagentStop
	}
	return &agentHooks{set: hs, name: name, stop: stop}
}

// agentHooks adapts a hookSet to agent.Hooks for one agent.
type agentHooks struct {
	set  *hookSet
	name string
	stop hooks.Event
}

// Hook implements agent.Hooks.
func (h *agentHooks) Hook(ctx context.Context, e agent.HookEvent) agent.HookResult {
	ev := hooks.Event(e.Name)
	if ev == hooks.Stop {
		ev = h.stop
	}
	if !h.set.active(ev) {
		return agent.HookResult{}
	}
	in := hooks.Input{HookEventName: ev, ToolName: e.Tool, ToolUseID: e.ToolUseID, ToolInput: e.Input, Prompt: e.Prompt, Trigger: e.Trigger}
	switch ev {
	case hooks.PostToolUseFailure:
		in.Error = e.Result.Content
	case hooks.PostToolUse:
		in.ToolResponse, _ = json.Marshal(e.Result.Content)
	}
	if ev == hooks.Stop || ev == hooks.SubagentStop {
		active := e.StopHookActive
		in.StopHookActive = &active
	}
	out := h.set.run(ctx, h.name, in)
	res := agent.HookResult{Block: out.Block, Reason: out.Reason, UpdatedInput: out.UpdatedInput, Context: out.Context,
		Halt: out.Halt, HaltReason: out.HaltReason}
	if out.Permission == "allow" || out.Permission == "ask" {
		res.Permission = out.Permission
	}
	return res
}

// sessionStart raises SessionStart for the lead ("startup", or "resume"
// for a resumed conversation); what the hooks add as context is queued
// for the lead's first prompt through send.
func (hs *hookSet) sessionStart(ctx context.Context, resumed bool, send func(string)) {
	if !hs.active(hooks.SessionStart) {
		return
	}
	source := "startup"
	if resumed {
		source = "resume"
	}
	if out := hs.run(ctx, transcript.KindLead, hooks.Input{HookEventName: hooks.SessionStart, Source: source}); out.Context != "" {
		send(out.Context)
	}
}

// sessionEnd raises SessionEnd for the lead; the hooks cannot block it.
func (hs *hookSet) sessionEnd(ctx context.Context, reason string) {
	if hs.active(hooks.SessionEnd) {
		hs.run(context.WithoutCancel(ctx), transcript.KindLead, hooks.Input{HookEventName: hooks.SessionEnd, Reason: reason})
	}
}

// taskGate returns the team tools' TaskGate running the TaskCreated and
// TaskCompleted hooks; nil when there are none.
func (hs *hookSet) taskGate() func(context.Context, string, teamtool.Self, tasklist.Task) (bool, string) {
	if !hs.active(hooks.TaskCreated) && !hs.active(hooks.TaskCompleted) {
		return nil
	}
	return func(ctx context.Context, gate string, self teamtool.Self, t tasklist.Task) (bool, string) {
		ev := hooks.Event(gate)
		if !hs.active(ev) {
			return false, ""
		}
		out := hs.run(ctx, self.Name, hooks.Input{HookEventName: ev, TeamName: self.Team, TeammateName: self.Name,
			TaskID: t.ID, TaskSubject: t.Subject, TaskDescription: t.Description})
		return out.Block, out.Reason
	}
}

// teammateIdle returns a teammate's BeforeIdle running the TeammateIdle
// hooks (exit 2 or "decision": "block" keeps it working, the reason its
// next prompt); nil when there are none.
func (hs *hookSet) teammateIdle(teamName, name string) func(context.Context) (bool, string) {
	if !hs.active(hooks.TeammateIdle) {
		return nil
	}
	return func(ctx context.Context) (bool, string) {
		out := hs.run(ctx, name, hooks.Input{HookEventName: hooks.TeammateIdle, TeamName: teamName, TeammateName: name})
		return out.Block, out.Reason
	}
}

// permissionHook returns the approver's PermissionHook: before a person
// (or --permission-prompt-command) is asked, the PermissionRequest hooks
// may allow or deny (exit 2 denies with stderr); when they do not, the
// Notification hooks hear "permission_prompt". Nil when neither event has
// hooks.
func (hs *hookSet) permissionHook() func(context.Context, approve.AskRequest) (approve.Answer, bool) {
	if !hs.active(hooks.PermissionRequest) && !hs.active(hooks.Notification) {
		return nil
	}
	return func(ctx context.Context, r approve.AskRequest) (approve.Answer, bool) {
		name := cmp.Or(r.Agent, transcript.KindLead)
		if hs.active(hooks.PermissionRequest) {
			out := hs.run(ctx, name, hooks.Input{HookEventName: hooks.PermissionRequest, ToolName: r.Tool, ToolInput: r.Input,
				ToolUseID: r.ToolUseID, PermissionMode: string(r.Mode)})
			switch {
			case out.Block:
				return approve.Answer{Message: "PermissionRequest hook: " + out.Reason}, true
			case out.Permission == "allow":
				return approve.Answer{Allow: true, Message: "allowed by a PermissionRequest hook", UpdatedInput: out.UpdatedInput}, true
			}
		}
		if hs.active(hooks.Notification) {
			hs.run(ctx, name, hooks.Input{HookEventName: hooks.Notification, NotificationType: "permission_prompt",
				Message: fmt.Sprintf("troupe needs your permission to use %s", r.Tool), PermissionMode: string(r.Mode)})
		}
		return approve.Answer{}, false
	}
}

// review is /hooks of the interactive lead: it lists the hooks in force
// and, when the settings files now say something else, the new ones,
// which it adopts: the person has seen them.
func (hs *hookSet) review() (string, error) {
	if hs == nil {
		return "No hooks.", nil
	}
	cur := hs.cfg.Load()
	if !cur.Changed() {
		return "Hooks in force (unchanged since the session started):\n" + describeHooks(cur), nil
	}
	next, err := hooks.Load(settingsPaths(hs.home, hs.cwd))
	if err != nil {
		return "", fmt.Errorf("the changed settings are not used: %w", err)
	}
	hs.cfg.Store(next)
	hs.reported.Store(false)
	return "The settings files changed; these hooks are now in force:\n" + describeHooks(next) +
		"\nBefore:\n" + describeHooks(cur), nil
}

// describeHooks lists c's hooks, one a line.
func describeHooks(c *hooks.Config) string {
	if c.Empty() {
		return "  (none)\n"
	}
	var b strings.Builder
	for _, ev := range hooks.Events {
		for _, h := range c.Hooks {
			if h.Event == ev {
				fmt.Fprintf(&b, "  %s [%s] %s (%s)\n", h.Event, cmp.Or(h.Matcher, "*"), termtext.Line(h.Command), h.Source)
			}
		}
	}
	return b.String()
}

// hookBlocked reports a tool call a PreToolUse hook blocked, for the
// team's timeline: "Bash blocked by a hook: <reason's first line>".
func hookBlocked(e agent.Event) (string, bool) {
	if e.Type != agent.EventToolResult || e.Call == nil || e.ToolResult == nil || !e.ToolResult.IsError {
		return "", false
	}
	reason, ok := strings.CutPrefix(e.ToolResult.Text, agent.HookBlocked)
	if !ok {
		return "", false
	}
	reason, _, _ = strings.Cut(reason, "\n")
	return e.Call.Name + " blocked by a hook: " + termtext.Line(reason), true
}
