package kit

import (
	"context"
	"strings"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/bench"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/teamtool"
)

// BenchTeammate runs one teammate of a `troupe bench team` host: the swarm
// runtime with the team tools (SendMessage, TaskUpdate, ...) on the
// host's model, reporting its idles and claims to the bench.
func BenchTeammate(ctx context.Context, s bench.TeammateSpec) error {
	self := teamtool.Self{Team: s.Team, Name: s.Name, Backend: "in-process"}
	tools := teamtool.Tools(teamtool.Config{Teams: s.Teams, Mail: s.Mail, Tasks: s.Tasks, Self: func() teamtool.Self { return self }})
	tm, err := swarm.NewTeammate(swarm.TeammateConfig{Team: s.Team, Name: s.Name, Teams: s.Teams, Mail: s.Mail, Tasks: s.Tasks, Prompt: s.Prompt,
		OnEvent: func(e swarm.Event) {
			switch e.Kind {
			case swarm.EventIdle:
				s.OnIdle()
			case swarm.EventClaim:
				id, _, _ := strings.Cut(strings.TrimPrefix(e.Text, "claimed task #"), " ")
				s.OnClaim(id)
			}
		},
		Build: func(*swarm.Teammate) (agent.Config, error) {
			reg, err := tool.NewRegistry(tools...)
			return agent.Config{Model: s.Model, System: "bench teammate", Tools: reg}, err
		}})
	if err != nil {
		return err
	}
	return tm.Run(ctx)
}
