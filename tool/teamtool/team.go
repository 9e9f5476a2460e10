// Package teamtool provides the team tools an agent's model calls to work
// in an agent team (docs/protocol.md sections 6, 8 and 9): TeamCreate and
// TeamDelete for the lead, SendMessage (plain messages, broadcast, and the
// structured shutdown and plan-approval answers), the shared task list
// tools TaskCreate, TaskGet, TaskList and TaskUpdate, and ExitPlanMode for
// plan-mode teammates.
//
//	import "github.com/troupe-dev/troupe/tool/teamtool"
//
// The tools are thin: they validate the model's input, read the caller's
// identity (Config.Self) at each call, and act on the stores (team.Store,
// mailbox.Store, tasklist.Store) and, for the lead, on the runtime through
// the Lead interface. Everything the runtime must follow (an approved
// shutdown, a submitted plan) is reported through Hooks. A failure the
// model can act on is an error Result; a Go error from Run means the
// context ended or the configuration is broken.
//
// The tools are safe for concurrent use. Claiming a task (TaskUpdate
// setting owner to the caller and status in_progress) goes through
// tasklist.List.ClaimTask, so two agents never both own a task.
package teamtool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
)

// Self is the calling agent's identity, read at each call.
type Self struct {
	Team    string // the team it belongs to or leads; "" when the lead has no team yet
	Name    string // member name ("team-lead" for the lead)
	Color   string
	PaneID  string // for shutdown_approved frames ("in-process" for in-process teammates)
	Backend string // backendType for shutdown_approved ("in-process", "tmux", "iterm2")
	Lead    bool
}

// Lead is the lead's side of the runtime, behind TeamCreate and TeamDelete.
type Lead interface {
	// CreateTeam creates a team led by the caller (refused, with an error
	// the model can read, when it already leads one).
	CreateTeam(ctx context.Context, name, description, agentType string) (team.Config, error)
	// DeleteTeam deletes the caller's team: refused while non-lead members
	// are active (the error names them); kills the panes it created and
	// removes the team folder, task list and mailboxes.
	DeleteTeam(ctx context.Context) (teamName string, err error)
}

// Hooks let the runtime follow what the model decided. All optional.
type Hooks struct {
	// ShutdownApproved is called after a teammate's approving
	// shutdown_response has been delivered to the lead: the runtime ends
	// the teammate after the current tool round.
	ShutdownApproved func(requestID string)
	// PlanSubmitted is called when ExitPlanMode sends a plan approval
	// request, just before the send, so that the runtime knows the request
	// id before the lead's answer can arrive.
	PlanSubmitted func(requestID, planDigest string)
	// PlanDigest returns the digest (sha256 hex of planContent) of a plan
	// approval request the lead received, for plan_approval_response.
	PlanDigest func(requestID string) (string, bool)
	// TaskGate, when set, is asked when the caller creates a task
	// (GateTaskCreated, after it is stored: a refusal deletes it again)
	// and before it marks one completed (GateTaskCompleted: a refusal
	// leaves the task as it was). A refusal's reason is the model's
	// error result. The user's TaskCreated and TaskCompleted hooks.
	TaskGate func(ctx context.Context, gate string, self Self, t tasklist.Task) (refused bool, reason string)
}

// The gates of Hooks.TaskGate.
const (
	GateTaskCreated   = "TaskCreated"
	GateTaskCompleted = "TaskCompleted"
)

// Config configures the team tools. Teams, Mail, Tasks and Self are
// required: a call made without them returns a Go error.
type Config struct {
	Teams team.Store
	Mail  mailbox.Store
	Tasks tasklist.Store
	Self  func() Self
	Lead  Lead // nil for teammates: TeamCreate and TeamDelete are then not in Tools()
	// SubAgents, when set, receives SendMessage calls whose `to` is not a
	// member of the caller's team (a background sub-agent id or name);
	// it is the existing tool/agenttool SendMessage.
	SubAgents tool.Tool
	Hooks     Hooks
	Now       func() time.Time
}

// FilePather is implemented by team stores that keep a team in a file;
// TeamCreate reports the path to the model.
type FilePather interface {
	TeamFilePath(name string) string
}

// Tools returns TeamCreate and TeamDelete (lead only), SendMessage,
// TaskCreate, TaskGet, TaskList, TaskUpdate, and ExitPlanMode (teammates only).
func Tools(cfg Config) []tool.Tool {
	e := &env{cfg: cfg}
	var out []tool.Tool
	if cfg.Lead != nil {
		out = append(out, &TeamCreate{e}, &TeamDelete{e})
	}
	out = append(out, &SendMessage{e}, &TaskCreate{e}, &TaskGet{e}, &TaskList{e}, &TaskUpdate{e})
	if cfg.Lead == nil {
		out = append(out, &ExitPlanMode{e})
	}
	return out
}

// env is what every tool of one Tools call shares.
type env struct{ cfg Config }

// errConfig reports a Config field a call needs and lacks.
func errConfig(field string) error {
	return fmt.Errorf("teamtool: Config.%s is nil", field)
}

// self returns the caller's identity, or a Go error when Config.Self is
// missing.
func (e *env) self() (Self, error) {
	if e.cfg.Self == nil {
		return Self{}, errConfig("Self")
	}
	return e.cfg.Self(), nil
}

func (e *env) now() time.Time {
	if e.cfg.Now != nil {
		return e.cfg.Now()
	}
	return time.Now()
}

// stamp formats t as a frame timestamp.
func stamp(t time.Time) string { return t.UTC().Format(mailbox.TimeLayout) }

// noTeam is the error Result of a team call made outside any team.
func noTeam(toolName string, s Self) tool.Result {
	if s.Lead {
		return tool.Errorf("%s: you are not in a team yet; an Agent call with a name spawns a teammate into your team (or TeamCreate creates one, when you have it)", toolName)
	}
	return tool.Errorf("%s: you are not in a team; team messages and the shared task list are only available to team members", toolName)
}

// jsonResult returns v as the content of a successful Result.
func jsonResult(v any) (tool.Result, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return tool.Result{}, fmt.Errorf("teamtool: encode result: %w", err)
	}
	return tool.Result{Content: string(b)}, nil
}

// ctxErr returns the cause of ctx's end, or nil while ctx is live: a tool
// whose store call failed because its context ended returns that as a Go
// error instead of a Result.
func ctxErr(ctx context.Context) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// rosterNames lists the members of c, sorted, without skip.
func rosterNames(c team.Config, skip string) []string {
	var out []string
	for _, n := range c.Names() {
		if n != skip {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// unknownRecipient explains err (an *mailbox.UnknownRecipientError) to the
// model, or returns false.
func unknownRecipient(toolName string, err error) (tool.Result, bool) {
	var ure *mailbox.UnknownRecipientError
	if !errors.As(err, &ure) {
		return tool.Result{}, false
	}
	valid := slices.Clone(ure.Valid)
	slices.Sort(valid)
	return tool.Errorf("%s: %q is not a member of team %q; members: %s", toolName, ure.Name, ure.Team, strings.Join(valid, ", ")), true
}
