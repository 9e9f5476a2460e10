package kit

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
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/tool/teamtool"
	"github.com/troupe-dev/troupe/transcript"
)

// Hooks is the hooks of one run, read once when it starts: a settings
// file changed during the run is reported, never used (an agent cannot
// install a hook and have it run in the same breath).
type Hooks struct {
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

// NewHooks reads the hooks of the settings files (in troupe's home and
// the project at cwd) for a session; warnings go to warn. A malformed
// hooks block is an error: the run stops before any model call.
func NewHooks(home, cwd, session string, log *audit.Log, warn io.Writer, now func() time.Time) (*Hooks, error) {
	c, err := hooks.Load(SettingsPaths(home, cwd))
	if err != nil {
		return nil, err
	}
	hs := &Hooks{runner: hooks.Runner{Dir: cwd, Now: now}, home: home, session: session, cwd: cwd,
		tdir: transcript.Dir(home, session), audit: log, warnW: warn}
	hs.cfg.Store(c)
	for _, w := range c.Warnings {
		hs.warn(w)
	}
	for _, w := range UntrustedHooks(home, cwd) {
		hs.warn(w)
	}
	return hs, nil
}

// UntrustedHooks returns a warning for each settings file of cwd that
// holds hooks left out because the user has not trusted the folder.
func UntrustedHooks(home, cwd string) []string {
	var out []string
	for _, f := range settings.Files(home, cwd) {
		if raw, _, _ := settings.Key[json.RawMessage]([]settings.File{f}, "hooks"); f.Untrusted && len(raw) > 0 && string(raw) != "null" {
			out = append(out, fmt.Sprintf("%s: hooks not run: the folder is not trusted (troupe trust %s)", f.Path, cwd))
		}
	}
	return out
}

// SettingsPaths returns the paths of the settings files whose hooks run:
// those of a folder the user has not trusted are left out
// (settings.File.Untrusted).
func SettingsPaths(home, cwd string) []string {
	var out []string
	for _, f := range settings.Files(home, cwd) {
		if !f.Untrusted {
			out = append(out, f.Path)
		}
	}
	return out
}

func (hs *Hooks) warn(msg string) {
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

// WarnTo sends later warnings to notify instead of the writer (the
// interactive lead's timeline: its terminal is its screen's).
func (hs *Hooks) WarnTo(notify func(string)) {
	hs.warnMu.Lock()
	defer hs.warnMu.Unlock()
	hs.notify = notify
}

// SetMode gives the hooks' input the permission mode of the lead.
func (hs *Hooks) SetMode(mode func() string) { hs.mode = mode }

// Active reports whether ev has hooks; false for a nil set.
func (hs *Hooks) Active(ev hooks.Event) bool { return hs != nil && hs.cfg.Load().Has(ev) }

// run runs ev's hooks for agentName, with the input's common fields
// filled in; it writes the runs to the audit log and the warnings out.
func (hs *Hooks) run(ctx context.Context, agentName string, in hooks.Input) hooks.Outcome {
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

// ForAgent returns the agent.Hooks of one agent; subagent makes its Stop
// event SubagentStop. A nil set gives nil (no hooks at all).
func (hs *Hooks) ForAgent(name string, subagent bool) agent.Hooks {
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
	set  *Hooks
	name string
	stop hooks.Event
}

// Hook implements agent.Hooks.
func (h *agentHooks) Hook(ctx context.Context, e agent.HookEvent) agent.HookResult {
	ev := hooks.Event(e.Name)
	if ev == hooks.Stop {
		ev = h.stop
	}
	if !h.set.Active(ev) {
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

// SessionStart raises SessionStart for the lead ("startup", or "resume"
// for a resumed conversation); what the hooks add as context is queued
// for the lead's first prompt through send.
func (hs *Hooks) SessionStart(ctx context.Context, resumed bool, send func(string)) {
	if !hs.Active(hooks.SessionStart) {
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

// SessionEnd raises SessionEnd for the lead; the hooks cannot block it.
func (hs *Hooks) SessionEnd(ctx context.Context, reason string) {
	if hs.Active(hooks.SessionEnd) {
		hs.run(context.WithoutCancel(ctx), transcript.KindLead, hooks.Input{HookEventName: hooks.SessionEnd, Reason: reason})
	}
}

// TaskGate returns the team tools' TaskGate running the TaskCreated and
// TaskCompleted hooks; nil when there are none.
func (hs *Hooks) TaskGate() func(context.Context, string, teamtool.Self, tasklist.Task) (bool, string) {
	if !hs.Active(hooks.TaskCreated) && !hs.Active(hooks.TaskCompleted) {
		return nil
	}
	return func(ctx context.Context, gate string, self teamtool.Self, t tasklist.Task) (bool, string) {
		ev := hooks.Event(gate)
		if !hs.Active(ev) {
			return false, ""
		}
		out := hs.run(ctx, self.Name, hooks.Input{HookEventName: ev, TeamName: self.Team, TeammateName: self.Name,
			TaskID: t.ID, TaskSubject: t.Subject, TaskDescription: t.Description})
		return out.Block, out.Reason
	}
}

// TeammateIdle returns a teammate's BeforeIdle running the TeammateIdle
// hooks (exit 2 or "decision": "block" keeps it working, the reason its
// next prompt); nil when there are none.
func (hs *Hooks) TeammateIdle(teamName, name string) func(context.Context) (bool, string) {
	if !hs.Active(hooks.TeammateIdle) {
		return nil
	}
	return func(ctx context.Context) (bool, string) {
		out := hs.run(ctx, name, hooks.Input{HookEventName: hooks.TeammateIdle, TeamName: teamName, TeammateName: name})
		return out.Block, out.Reason
	}
}

// PermissionHook returns the approver's PermissionHook: before a person
// (or --permission-prompt-command) is asked, the PermissionRequest hooks
// may allow or deny (exit 2 denies with stderr); when they do not, the
// Notification hooks hear "permission_prompt". Nil when neither event has
// hooks.
func (hs *Hooks) PermissionHook() func(context.Context, approve.AskRequest) (approve.Answer, bool) {
	if !hs.Active(hooks.PermissionRequest) && !hs.Active(hooks.Notification) {
		return nil
	}
	return func(ctx context.Context, r approve.AskRequest) (approve.Answer, bool) {
		name := cmp.Or(r.Agent, transcript.KindLead)
		if hs.Active(hooks.PermissionRequest) {
			out := hs.run(ctx, name, hooks.Input{HookEventName: hooks.PermissionRequest, ToolName: r.Tool, ToolInput: r.Input,
				ToolUseID: r.ToolUseID, PermissionMode: string(r.Mode)})
			switch {
			case out.Block:
				return approve.Answer{Message: "PermissionRequest hook: " + out.Reason}, true
			case out.Permission == "allow":
				return approve.Answer{Allow: true, Message: "allowed by a PermissionRequest hook", UpdatedInput: out.UpdatedInput}, true
			}
		}
		if hs.Active(hooks.Notification) {
			hs.run(ctx, name, hooks.Input{HookEventName: hooks.Notification, NotificationType: "permission_prompt",
				Message: fmt.Sprintf("troupe needs your permission to use %s", r.Tool), PermissionMode: string(r.Mode)})
		}
		return approve.Answer{}, false
	}
}

// Review is /hooks of the interactive lead: it lists the hooks in force
// and, when the settings files now say something else, the new ones,
// which it adopts: the person has seen them.
func (hs *Hooks) Review() (string, error) {
	if hs == nil {
		return "No hooks.", nil
	}
	cur := hs.cfg.Load()
	if !cur.Changed() {
		return "Hooks in force (unchanged since the session started):\n" + describeHooks(cur), nil
	}
	next, err := hooks.Load(SettingsPaths(hs.home, hs.cwd))
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

// HookBlocked reports a tool call a PreToolUse hook blocked, for the
// team's timeline: "Bash blocked by a hook: <reason's first line>".
func HookBlocked(e agent.Event) (string, bool) {
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
