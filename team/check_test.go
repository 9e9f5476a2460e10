package team_test

import (
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/team"
)

func TestCheckMembers(t *testing.T) {
	c := team.Config{Name: "crew", Members: []team.Member{
		{Name: team.LeadName, AgentID: team.LeadID("crew"), Color: ""},
		{Name: "alice", AgentID: "alice@crew", Color: "blue"},
		{Name: "a.b", AgentID: "a.b@crew"},
		{Name: "A-B", AgentID: "A-B@crew"},
		{Name: "bob", AgentID: "bob@other"},
		{Name: "carol", AgentID: "carol@crew", Color: "\x1b[31m"},
	}}
	want := []string{"", "", "agent name", "shares inbox file A-B.json with \"a.b\"", `agent id "bob@other"`, "not in the palette"}
	got := c.CheckMembers()
	for i, m := range c.Members {
		switch {
		case want[i] == "" && got[i] != nil:
			t.Errorf("CheckMembers()[%s] = %v; want valid", m.Name, got[i])
		case want[i] != "" && (got[i] == nil || !strings.Contains(got[i].Error(), want[i])):
			t.Errorf("CheckMembers()[%s] = %v; want an error containing %q", m.Name, got[i], want[i])
		}
	}
}
