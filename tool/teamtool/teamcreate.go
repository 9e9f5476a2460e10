package teamtool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"strings"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
)

// TeamCreate is the lead's TeamCreate tool (the legacy schema): it creates
// a team led by the caller through Config.Lead.
type TeamCreate struct{ e *env }

//go:embed teamcreate.md
var teamCreateDescription string

const teamCreateSchema = `{
  "type": "object",
  "properties": {
    "team_name": {"type": "string", "description": "Name of the new team: letters, digits, spaces, '-', '_' and '.', at most 64 characters"},
    "description": {"type": "string", "description": "What the team is for"},
    "agent_type": {"type": "string", "description": "Your role as the lead, stored as the lead member's agentType"}
  },
  "required": ["team_name"],
  "additionalProperties": false
}`

// Spec implements tool.Tool.
func (*TeamCreate) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "TeamCreate", Description: teamCreateDescription, InputSchema: json.RawMessage(teamCreateSchema)}
}

// ReadOnly implements tool.Tool.
func (*TeamCreate) ReadOnly(json.RawMessage) bool { return false }

// Run implements tool.Tool.
func (c *TeamCreate) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in struct {
		TeamName    string `json:"team_name"`
		Description string `json:"description"`
		AgentType   string `json:"agent_type"`
	}
	if res, ok := tool.Decode("TeamCreate", call.Input, &in); !ok {
		return res, nil
	}
	in.TeamName = strings.TrimSpace(in.TeamName)
	if in.TeamName == "" {
		return tool.Errorf("TeamCreate: invalid input: team_name is required"), nil
	}
	if err := team.ValidateTeamName(in.TeamName); err != nil {
		return tool.Errorf("TeamCreate: invalid input: %v", err), nil
	}
	if c.e.cfg.Lead == nil {
		return tool.Result{}, errConfig("Lead")
	}
	cfg, err := c.e.cfg.Lead.CreateTeam(ctx, in.TeamName, strings.TrimSpace(in.Description), strings.TrimSpace(in.AgentType))
	if err != nil {
		if e := ctxErr(ctx); e != nil {
			return tool.Result{}, e
		}
		return tool.Errorf("TeamCreate: %v", err), nil
	}
	out := struct {
		TeamName     string `json:"team_name"`
		TeamFilePath string `json:"team_file_path"`
		LeadAgentID  string `json:"lead_agent_id"`
	}{TeamName: cfg.Name, LeadAgentID: cfg.LeadAgentID}
	if out.LeadAgentID == "" {
		out.LeadAgentID = team.LeadID(cfg.Name)
	}
	if p, ok := c.e.cfg.Teams.(FilePather); ok {
		out.TeamFilePath = p.TeamFilePath(cfg.Name)
	}
	return jsonResult(out)
}

// TeamDelete is the lead's TeamDelete tool: it deletes the caller's team
// through Config.Lead, refused while teammates are active.
type TeamDelete struct{ e *env }

//go:embed teamdelete.md
var teamDeleteDescription string

const teamDeleteSchema = `{"type": "object", "properties": {}, "additionalProperties": false}`

// Spec implements tool.Tool.
func (*TeamDelete) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "TeamDelete", Description: teamDeleteDescription, InputSchema: json.RawMessage(teamDeleteSchema)}
}

// ReadOnly implements tool.Tool.
func (*TeamDelete) ReadOnly(json.RawMessage) bool { return false }

// Run implements tool.Tool.
func (d *TeamDelete) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in struct{}
	if res, ok := tool.Decode("TeamDelete", call.Input, &in); !ok {
		return res, nil
	}
	if d.e.cfg.Lead == nil {
		return tool.Result{}, errConfig("Lead")
	}
	name, err := d.e.cfg.Lead.DeleteTeam(ctx)
	if err != nil {
		if e := ctxErr(ctx); e != nil {
			return tool.Result{}, e
		}
		var active *team.ActiveError
		if errors.As(err, &active) {
			return tool.Errorf("TeamDelete: team %q still has active members: %s; ask each to shut down (SendMessage with a shutdown_request), wait for their approval, then call TeamDelete again", active.Team, strings.Join(active.Names, ", ")), nil
		}
		return tool.Errorf("TeamDelete: %v", err), nil
	}
	msg := "Team " + name + " deleted: its members, inboxes and task list are gone."
	if n, ok := d.e.cfg.Lead.(interface{ DeleteTeamNote(context.Context) string }); ok {
		msg += n.DeleteTeamNote(ctx) // such as the members' worktrees: removed or kept
	}
	return jsonResult(struct {
		Success  bool   `json:"success"`
		Message  string `json:"message"`
		TeamName string `json:"team_name"`
	}{true, msg, name})
}
