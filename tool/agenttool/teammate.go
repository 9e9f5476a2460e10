package agenttool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
)

// Teammates spawns agent-team teammates: set as Config.Teammates, it makes
// an Agent call with a `name` start a teammate of the caller's team
// instead of a sub-agent. The implementation (the team runtime) decides
// what a call made outside a team does; its error is shown to the model.
type Teammates interface {
	SpawnTeammate(ctx context.Context, r TeammateRequest) (TeammateInfo, error)
}

// TeammateRequest is what an Agent call asks of a new teammate.
type TeammateRequest struct {
	Name, Description, Prompt, Model, AgentType string
	PlanModeRequired                            bool   // mode "plan"
	Mode                                        string // the requested permission mode, "" = inherit
	// Isolation is "worktree" when the teammate should work in its own
	// git worktree; the implementation makes it (or refuses with why).
	Isolation string
	// Dir is the teammate's working folder when it is not the lead's
	// (its worktree), set by an Isolation-aware Teammates wrapper.
	Dir string
	// Color is its definition's color; "" picks the next free one.
	Color string
	// Window asks for a window of its own instead of a split pane (the
	// call's use_splitpane false); nil leaves it to the setting.
	Window *bool
}

// TeammateInfo describes a spawned teammate.
type TeammateInfo struct {
	AgentID, Name, Team, Color, Model, Backend, PaneID string
	PlanModeRequired                                   bool
	WindowName                                         string // its own window, "" in a split pane
}

// inProcess is the backend type of a teammate on a goroutine, reported in
// the tmux fields of its spawn result.
const inProcess = "in-process"

// MaxModelLen bounds a teammate's model id.
const MaxModelLen = 200

// teammateResult is the spawn result the model reads (docs/protocol.md section
// 9, the Agent tool's teammate output).
type teammateResult struct {
	TeammateID       string `json:"teammate_id"`
	AgentID          string `json:"agent_id"`
	AgentType        string `json:"agent_type"`
	Model            string `json:"model"`
	Name             string `json:"name"`
	Color            string `json:"color"`
	TmuxSessionName  string `json:"tmux_session_name"`
	TmuxWindowName   string `json:"tmux_window_name"`
	TmuxPaneID       string `json:"tmux_pane_id"`
	TeamName         string `json:"team_name"`
	IsSplitpane      bool   `json:"is_splitpane"`
	PlanModeRequired bool   `json:"plan_mode_required"`
	Message          string `json:"message"`
}

// checkTeammate validates what only a teammate call allows or needs: any
// model id (not just the aliases), a name that is not reserved (main,
// team-lead, user, system, ...), and a prompt that is not a protocol
// frame (one mailbox decodes, or one of docs/protocol.md section 6.6's list).
func checkTeammate(in input) (tool.Result, bool) {
	if strings.ContainsAny(in.Model, "\r\n\t ") || len(in.Model) > MaxModelLen {
		return tool.Errorf("Agent: invalid input: model %q is not a model id (one word, at most %d bytes)", in.Model, MaxModelLen), false
	}
	if err := team.ValidateAgentName(in.Name, false); err != nil {
		return tool.Errorf("Agent: invalid input: name %q cannot be a teammate's name: %v", in.Name, err), false
	}
	if f, err := mailbox.Decode(in.Prompt); err != nil || f.Kind() != "" || mailbox.ProtocolKind(in.Prompt) != "" {
		return tool.Errorf("Agent: invalid input: a teammate's prompt may not be a protocol frame (JSON with a protocol type); write the task as plain text"), false
	}
	return tool.Result{}, true
}

// spawnTeammate starts the teammate in asks for through Config.Teammates.
func (t *Tool) spawnTeammate(ctx context.Context, in input) (tool.Result, error) {
	if res, ok := checkTeammate(in); !ok {
		return res, nil
	}
	color := ""
	if def, ok := t.resolve(in.SubagentType); ok {
		if in.Model == "" {
			in.Model = def.Model
		}
		if in.Mode == "" {
			in.Mode = def.PermissionMode
		}
		color = def.Color
	}
	req := TeammateRequest{Name: in.Name, Description: in.Description, Prompt: in.Prompt, Model: in.Model,
		AgentType: in.SubagentType, PlanModeRequired: in.Mode == "plan", Mode: in.Mode, Isolation: in.Isolation, Color: color}
	if in.UseSplitpane != nil {
		window := !*in.UseSplitpane
		req.Window = &window
	}
	info, err := t.cfg.Teammates.SpawnTeammate(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, context.Cause(ctx)
		}
		return tool.Errorf("Agent: could not spawn teammate %q: %v", in.Name, err), nil
	}
	out := teammateResult{TeammateID: info.AgentID, AgentID: info.AgentID, AgentType: in.SubagentType, Model: info.Model,
		Name: info.Name, Color: info.Color, TmuxPaneID: info.PaneID, TeamName: info.Team,
		IsSplitpane: info.Backend != "" && info.Backend != inProcess && info.WindowName == "", PlanModeRequired: info.PlanModeRequired,
		TmuxWindowName: info.WindowName}
	if info.Backend == inProcess || info.Backend == "" {
		out.TmuxSessionName, out.TmuxWindowName, out.TmuxPaneID = inProcess, inProcess, inProcess
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Teammate %s spawned in team %s and working on your prompt. Its messages reach you when it sends them or goes idle; talk to it with SendMessage (to: %q) and give it work through the task list.", info.Name, info.Team, info.Name)
	if info.PlanModeRequired {
		b.WriteString(" It starts in plan mode: it will send you its plan for approval (answer with a plan_approval_response).")
	}
	out.Message = b.String()
	data, err := json.Marshal(out)
	if err != nil {
		return tool.Result{}, fmt.Errorf("agent: encode teammate result: %w", err)
	}
	return tool.Result{Content: string(data)}, nil
}
