package teamtool_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool/teamtool"
)

// pathTeams is a team store that keeps its teams in files.
type pathTeams struct {
	team.Store
	root string
}

func (p pathTeams) TeamFilePath(name string) string {
	return filepath.Join(p.root, "teams", name, "config.json")
}

func TestTeamCreateDelete(t *testing.T) {
	eachStore(t, func(t *testing.T, s stores) {
		l := &storeLead{teams: s.Teams}
		self := func() teamtool.Self { return teamtool.Self{Team: l.current(), Name: team.LeadName, Lead: true} }
		ts := tools(teamtool.Config{Teams: pathTeams{s.Teams, "/root"}, Mail: s.Mail, Tasks: s.Tasks, Self: self, Lead: l, Now: clock})

		ts.fails(t, "TeamCreate", `{}`, "team_name is required")
		ts.fails(t, "TeamCreate", `{"team_name": "../etc"}`, "invalid input")
		ts.fails(t, "TeamCreate", `{"team_name": "x", "members": []}`, `unknown field "members"`)
		ts.fails(t, "TeamDelete", `{}`, "lead no team")

		var out struct {
			TeamName     string `json:"team_name"`
			TeamFilePath string `json:"team_file_path"`
			LeadAgentID  string `json:"lead_agent_id"`
		}
		ts.ok(t, "TeamCreate", `{"team_name": "Parser Work", "description": "fix the parser", "agent_type": "architect"}`, &out)
		if out.TeamName != "parser-work" || out.LeadAgentID != "team-lead@parser-work" || out.TeamFilePath != "/root/teams/parser-work/config.json" {
			t.Errorf("TeamCreate = %+v", out)
		}
		c, err := s.Teams.Get(t.Context(), out.TeamName)
		if err != nil {
			t.Fatal(err)
		}
		if lead, _ := c.Member(team.LeadName); c.Description != "fix the parser" || lead.AgentType != "architect" {
			t.Errorf("stored team %+v", c)
		}
		ts.fails(t, "TeamCreate", `{"team_name": "second"}`, "already lead team parser-work")

		// Once in the team, the task tools work on its list.
		ts.ok(t, "TaskCreate", `{"subject": "s", "description": "d"}`, nil)

		if _, err := team.AddMember(t.Context(), s.Teams, c.Name, team.Member{Name: "alice"}, epoch); err != nil {
			t.Fatal(err)
		}
		ts.fails(t, "TeamDelete", `{}`, `team "parser-work" still has active members: alice`, "shutdown_request")
		if err := team.SetActive(t.Context(), s.Teams, c.Name, "alice", false); err != nil {
			t.Fatal(err)
		}
		var del struct {
			Success  bool   `json:"success"`
			Message  string `json:"message"`
			TeamName string `json:"team_name"`
		}
		ts.ok(t, "TeamDelete", `{}`, &del)
		if !del.Success || del.TeamName != "parser-work" || del.Message == "" {
			t.Errorf("TeamDelete = %+v", del)
		}
		if _, err := s.Teams.Get(t.Context(), "parser-work"); err == nil {
			t.Error("the team is still stored after TeamDelete")
		}
	})
}

func TestTeamCreateWithoutFilePath(t *testing.T) {
	eachStore(t, func(t *testing.T, s stores) {
		l := &storeLead{teams: s.Teams}
		ts := tools(teamtool.Config{Teams: s.Teams, Mail: s.Mail, Tasks: s.Tasks, Lead: l, Now: clock,
			Self: func() teamtool.Self { return teamtool.Self{Name: team.LeadName, Lead: true} }})
		var out map[string]string
		ts.ok(t, "TeamCreate", `{"team_name": "beta"}`, &out)
		if p, ok := out["team_file_path"]; !ok || p != "" {
			t.Errorf("team_file_path = %q, %v; want present and empty for a store without paths", p, ok)
		}
	})
}

func TestToolsByRole(t *testing.T) {
	names := func(cfg teamtool.Config) []string {
		var out []string
		for _, tl := range teamtool.Tools(cfg) {
			out = append(out, tl.Spec().Name)
			var schema map[string]any
			if err := json.Unmarshal(tl.Spec().InputSchema, &schema); err != nil {
				t.Errorf("%s schema is not JSON: %v", tl.Spec().Name, err)
			}
			if tl.Spec().Description == "" {
				t.Errorf("%s has no description", tl.Spec().Name)
			}
			ro := tl.ReadOnly(json.RawMessage(`{}`))
			if want := tl.Spec().Name == "TaskGet" || tl.Spec().Name == "TaskList"; ro != want {
				t.Errorf("%s ReadOnly = %v; want %v", tl.Spec().Name, ro, want)
			}
		}
		return out
	}
	lead := names(teamtool.Config{Lead: &storeLead{}})
	if want := []string{"TeamCreate", "TeamDelete", "SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate"}; !slices.Equal(lead, want) {
		t.Errorf("lead tools = %v; want %v", lead, want)
	}
	mate := names(teamtool.Config{})
	if want := []string{"SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate", "ExitPlanMode"}; !slices.Equal(mate, want) {
		t.Errorf("teammate tools = %v; want %v", mate, want)
	}
}

func TestMissingConfig(t *testing.T) {
	for _, tl := range teamtool.Tools(teamtool.Config{Lead: &storeLead{}}) {
		in := map[string]string{"TeamCreate": `{"team_name": "x"}`, "SendMessage": `{"to": "a", "message": "b"}`,
			"TaskCreate": `{"subject": "s", "description": "d"}`, "TaskGet": `{"taskId": "1"}`, "TaskUpdate": `{"taskId": "1", "status": "completed"}`}[tl.Spec().Name]
		if in == "" {
			in = `{}`
		}
		if tl.Spec().Name == "TeamCreate" || tl.Spec().Name == "TeamDelete" {
			continue // they need only Lead
		}
		if _, err := tl.Run(t.Context(), toolCall(tl.Spec().Name, in)); err == nil {
			t.Errorf("%s without Self ran; want a Go error naming the missing Config field", tl.Spec().Name)
		}
	}
}
