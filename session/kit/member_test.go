package kit_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/store/mem"
	"github.com/troupe-dev/troupe/team"
)

// TestMCPMember joins a team over MCP, checks the tools it is given,
// refuses a name another backend holds, and leaves (once) and
// disconnects as the roster expects.
func TestMCPMember(t *testing.T) {
	s := mem.New(mem.Options{})
	st := kit.Stores{Teams: s.Teams(), Mail: s.Mail(), Tasks: s.Tasks()}
	ctx := t.Context()
	now := func() time.Time { return time.Unix(1_700_000_000, 0) }
	if err := st.Teams.Create(ctx, team.Config{Name: "crew", LeadAgentID: "team-lead@crew", Members: []team.Member{{Name: team.LeadName, AgentID: "team-lead@crew"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := team.AddMember(ctx, st.Teams, "crew", team.Member{Name: "pane", BackendType: "tmux"}, now()); err != nil {
		t.Fatal(err)
	}
	if _, err := kit.JoinMCP(ctx, kit.MCPMemberConfig{Stores: st, Team: "crew", Name: "pane", Now: now}); err == nil || !strings.Contains(err.Error(), `backend "tmux"`) {
		t.Errorf("JoinMCP as a tmux member = %v; want refused, naming its backend", err)
	}
	if _, err := kit.JoinMCP(ctx, kit.MCPMemberConfig{Stores: st, Team: "nope", Name: "gem"}); err == nil || !strings.Contains(err.Error(), "join team nope") {
		t.Errorf("JoinMCP to a missing team = %v; want an error naming it", err)
	}

	m, err := kit.JoinMCP(ctx, kit.MCPMemberConfig{Stores: st, Team: "crew", Name: "gem", Cwd: "/w", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Member(); got.AgentID != "gem@crew" || got.BackendType != kit.MCPBackend {
		t.Errorf("Member() = %+v; want gem@crew on the mcp backend", got)
	}
	roster := func() map[string]team.Member {
		cfg, err := st.Teams.Get(ctx, "crew")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]team.Member{}
		for _, mm := range cfg.Members {
			out[mm.Name] = mm
		}
		return out
	}
	if g, ok := roster()["gem"]; !ok || !g.Active() {
		t.Errorf("gem on the roster = %+v, %v; want active", g, ok)
	}
	again, err := kit.JoinMCP(ctx, kit.MCPMemberConfig{Stores: st, Team: "crew", Name: "gem", Now: now})
	if err != nil || again.Member().AgentID != "gem@crew" {
		t.Errorf("JoinMCP again as gem = %v; want the MCP member taken over", err)
	}

	var names []string
	for _, tl := range m.Tools(nil) {
		names = append(names, tl.Spec().Name)
	}
	for _, want := range []string{"SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate", "ReadInbox", "WaitForWork", "TeamMembers"} {
		if !slices.Contains(names, want) {
			t.Errorf("Tools() = %v; want %s", names, want)
		}
	}
	if slices.Contains(names, "ExitPlanMode") {
		t.Errorf("Tools() = %v; want no ExitPlanMode", names)
	}
	if m.Server("1", nil) == nil {
		t.Error("Server() = nil")
	}

	m.Disconnect(ctx)
	if g := roster()["gem"]; g.IsActive == nil || *g.IsActive {
		t.Errorf("gem after Disconnect = %+v; want inactive on the roster", g)
	}
	if err := m.Leave(ctx); err != nil {
		t.Fatalf("Leave: %v", err)
	}
	if _, ok := roster()["gem"]; ok {
		t.Error("gem still on the roster after Leave")
	}
	if err := m.Leave(ctx); err != nil {
		t.Errorf("a second Leave = %v; want nil", err)
	}
}
