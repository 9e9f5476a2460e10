package kit

import (
	"cmp"
	"context"
	"errors"

	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/agenttool"
	"github.com/troupe-dev/troupe/tool/peertool"
)

// Addressing is what an agent can message beyond its own SendMessage's
// reach: other sessions (Presence), and the rows ListAgents shows of its
// sub-agents and teammates.
type Addressing struct {
	Presence *Presence // nil: no other sessions
	// Teams and Team give the teammates: the team named by Team() (""
	// while there is none).
	Teams team.Store
	Team  func() string
	Self  string // the agent's own member name, left out of the list
}

// Addressable returns tools with their SendMessage wrapped to reach other
// sessions (tool/peertool) and ListAgents added after it; the sub-agents listed
// are those of the Agent tool among tools. Tools without a SendMessage
// are returned as they are.
func Addressable(tools []tool.Tool, a Addressing) []tool.Tool {
	var cfg peertool.Config
	for _, t := range tools {
		if at, ok := t.(*agenttool.Tool); ok {
			cfg.Sources = append(cfg.Sources, subAgentRows(at))
		}
	}
	if a.Teams != nil && a.Team != nil {
		cfg.Sources = append(cfg.Sources, a.teammateRows)
	}
	if a.Presence != nil {
		cfg.Sources = append(cfg.Sources, a.Presence.Rows)
		cfg.Peers = a.Presence
	}
	out := make([]tool.Tool, 0, len(tools)+1)
	wrapped := false
	for _, t := range tools {
		if t.Spec().Name == "SendMessage" && !wrapped {
			out, wrapped = append(out, peertool.Wrap(t, cfg), peertool.NewListAgents(cfg)), true
			continue
		}
		out = append(out, t)
	}
	if !wrapped {
		return tools
	}
	return out
}

// subAgentRows lists the Agent tool's background sub-agents.
func subAgentRows(at *agenttool.Tool) peertool.Source {
	return func(context.Context) ([]peertool.Row, error) {
		var rows []peertool.Row
		for _, b := range at.Background() {
			state := "completed"
			if b.Running {
				state = "running"
			}
			rows = append(rows, peertool.Row{Name: cmp.Or(b.Name, b.ID), Ref: b.ID, Kind: peertool.KindSubAgent, State: state, Folder: b.Description, To: b.ID})
		}
		return rows, nil
	}
}

// teammateRows lists the members of the agent's team, but itself.
func (a Addressing) teammateRows(ctx context.Context) ([]peertool.Row, error) {
	name := a.Team()
	if name == "" {
		return nil, nil
	}
	cfg, err := a.Teams.Get(ctx, name)
	if errors.Is(err, team.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rows []peertool.Row
	for _, m := range cfg.Members {
		if m.Name == a.Self {
			continue
		}
		state := "active"
		if m.IsActive != nil && !*m.IsActive {
			state = "idle"
		}
		kind := peertool.KindTeammate
		if m.Name == team.LeadName {
			kind = peertool.KindParent
		}
		rows = append(rows, peertool.Row{Name: m.Name, Ref: m.AgentID, Kind: kind, State: state, Folder: m.Cwd, To: m.Name})
	}
	return rows, nil
}
