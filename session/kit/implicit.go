package kit

import (
	"context"
	"fmt"
	"sync"

	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/agenttool"
	"github.com/troupe-dev/troupe/tool/teamtool"
)

// SessionTeam is the name of a session's implicit team: "session-" and
// the first 8 hex digits of the session id (Claude Code 2.1's layout),
// "" when the id has none.
func SessionTeam(sessionID string) string {
	var hex []byte
	for i := 0; i < len(sessionID) && len(hex) < 8; i++ {
		c := sessionID[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
			hex = append(hex, c)
		case c >= 'A' && c <= 'F':
			hex = append(hex, c+'a'-'A')
		case c == '-':
		default:
			return ""
		}
	}
	if len(hex) < 8 {
		return ""
	}
	return "session-" + string(hex)
}

// implicitTeam spawns a teammate into the lead's team, creating the
// session's team (SessionTeam) first when the lead leads none: a named
// Agent call needs no TeamCreate (issue 37 item 1). TeamCreate still
// works before it, and the team goes at the session's end as any team of
// the lead's does (unless --keep-team).
type implicitTeam struct {
	inner agenttool.Teammates
	lead  *swarm.Lead
	name  string
	mu    *sync.Mutex // one creation for parallel named calls
}

// SpawnTeammate implements agenttool.Teammates.
func (t implicitTeam) SpawnTeammate(ctx context.Context, r agenttool.TeammateRequest) (agenttool.TeammateInfo, error) {
	if err := t.ensure(ctx); err != nil {
		return agenttool.TeammateInfo{}, err
	}
	return t.inner.SpawnTeammate(ctx, r)
}

// ensure creates the session's team when the lead leads none.
func (t implicitTeam) ensure(ctx context.Context) error {
	if t.name == "" {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lead.Team() != "" {
		return nil
	}
	if _, err := t.lead.CreateTeam(ctx, t.name, "", ""); err != nil && t.lead.Team() == "" {
		return fmt.Errorf("create the session's team %s: %w", t.name, err)
	}
	return nil
}

// teamFirst is a task tool of a lead whose team is implicit: a call
// creates the session's team first, so the lead may fill the shared task
// list before it spawns anybody (there is no TeamCreate to call).
type teamFirst struct {
	tool.Tool
	team implicitTeam
}

// Run implements tool.Tool.
func (t teamFirst) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	if err := t.team.ensure(ctx); err != nil {
		return tool.Errorf("%s: %v", t.Spec().Name, err), nil
	}
	return t.Tool.Run(ctx, call)
}

// implicitTools adapts the lead's team tools to its implicit team: no
// TeamCreate or TeamDelete, and the task tools make the session's team
// when the lead leads none yet.
func implicitTools(all []tool.Tool, team implicitTeam) []tool.Tool {
	out := make([]tool.Tool, 0, len(all))
	for _, t := range all {
		switch t.(type) {
		case *teamtool.TeamCreate, *teamtool.TeamDelete:
		case *teamtool.TaskCreate, *teamtool.TaskGet, *teamtool.TaskList, *teamtool.TaskUpdate:
			out = append(out, teamFirst{Tool: t, team: team})
		default:
			out = append(out, t)
		}
	}
	return out
}
