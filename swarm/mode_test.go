package swarm

import (
	"context"
	"testing"

	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/team"
)

// A teammate never gets a wider mode than its lead's, whatever its Agent
// call (or agent definition) asked for; the lead's mode is recorded on
// its member of the team file, where a pane teammate reads its bound; a
// teammate of a lead in plan mode plans first.
func TestSpawnModeNoWiderThanTheLead(t *testing.T) {
	tests := []struct {
		lead, asked string
		want        string
		planned     bool
		warned      bool
	}{
		{lead: "default", asked: "bypassPermissions", want: "default", warned: true},
		{lead: "default", asked: "acceptEdits", want: "default", warned: true},
		{lead: "default", asked: "auto", want: "default", warned: true},
		{lead: "default", asked: "", want: "default"},
		{lead: "default", asked: "dontAsk", want: "dontAsk"},
		{lead: "default", asked: "plan", want: "plan", planned: true},
		{lead: "acceptEdits", asked: "bypassPermissions", want: "acceptEdits", warned: true},
		{lead: "acceptEdits", asked: "auto", want: "acceptEdits"},
		{lead: "acceptEdits", asked: "default", want: "default"},
		{lead: "bypassPermissions", asked: "bypassPermissions", want: "bypassPermissions"},
		{lead: "bypassPermissions", asked: "", want: "bypassPermissions"},
		{lead: "dontAsk", asked: "", want: "dontAsk"},
		{lead: "dontAsk", asked: "default", want: "dontAsk", warned: true},
		{lead: "plan", asked: "bypassPermissions", want: "plan", planned: true, warned: true},
	}
	for _, tt := range tests {
		t.Run(tt.lead+"/"+tt.asked, func(t *testing.T) {
			h := newHarness(t, `{"turns": [{"reply": {"text": "ok"}, "repeat": true}]}`, func(c *LeadConfig) { c.Mode = tt.lead })
			cfg := h.create("modes")
			info, err := h.lead.Spawn(context.Background(), SpawnRequest{Name: "ann", Prompt: "wait", Mode: tt.asked})
			if err != nil {
				t.Fatal(err)
			}
			m, _ := h.member(cfg.Name, "ann")
			if m.Mode != tt.want || info.PlanModeRequired != tt.planned || m.PlanModeRequired != tt.planned {
				t.Errorf("lead %s, asked %q: member mode %q, plan required %v; want %q, %v", tt.lead, tt.asked, m.Mode, info.PlanModeRequired, tt.want, tt.planned)
			}
			if lead, _ := h.member(cfg.Name, team.LeadName); lead.Mode != string(permission.ChildMode(permission.Mode(tt.lead), "")) {
				t.Errorf("the lead's member has mode %q; want %q recorded", lead.Mode, tt.lead)
			}
			if got := h.hasEvent("ann", EventWarning, "a teammate never gets a wider mode"); got != tt.warned {
				t.Errorf("warned = %v; want %v", got, tt.warned)
			}
		})
	}
}

// The lead's current mode, not the one it started in, bounds a new
// teammate, and is recorded again when it changed.
func TestSpawnModeFollowsTheLead(t *testing.T) {
	cur := permission.ModeBypass
	h := newHarness(t, `{"turns": [{"reply": {"text": "ok"}, "repeat": true}]}`, func(c *LeadConfig) {
		c.Mode, c.ModeNow = "bypassPermissions", func() permission.Mode { return cur }
	})
	cfg := h.create("follow")
	if _, err := h.lead.Spawn(context.Background(), SpawnRequest{Name: "ann", Prompt: "wait", Mode: "bypassPermissions"}); err != nil {
		t.Fatal(err)
	}
	cur = permission.ModeDefault // the person switched the lead to default
	if _, err := h.lead.Spawn(context.Background(), SpawnRequest{Name: "bob", Prompt: "wait", Mode: "bypassPermissions"}); err != nil {
		t.Fatal(err)
	}
	ann, _ := h.member(cfg.Name, "ann")
	bob, _ := h.member(cfg.Name, "bob")
	lead, _ := h.member(cfg.Name, team.LeadName)
	if ann.Mode != "bypassPermissions" || bob.Mode != "default" || lead.Mode != "default" {
		t.Errorf("ann %q, bob %q, lead %q; want bypassPermissions, default, default", ann.Mode, bob.Mode, lead.Mode)
	}
}
