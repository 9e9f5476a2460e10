package kit

import (
	"context"

	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/prtool"
)

// PRTools returns subscribe_pr_activity and unsubscribe_pr_activity of
// agent agentID ("" for the one that owns reg): each subscription is a
// monitor_mcp task of reg (docs/monitor.md, "Pull requests"), so its
// events wake the agent like any monitor's, TaskStop ends it too, and it
// ends with the agent. cfg's Monitors is set here; its other fields (the
// API root, the token, the default interval) pass through.
func PRTools(reg *task.Registry, agentID string, cfg prtool.Config) []tool.Tool {
	cfg.Monitors = prMonitors{reg: reg, agentID: agentID}
	return prtool.Tools(cfg)
}

// prMonitors are an agent's pull-request monitors on a task registry.
type prMonitors struct {
	reg     *task.Registry
	agentID string
}

// StartWatch implements prtool.Monitors.
func (m prMonitors) StartWatch(w prtool.Watch) (string, error) {
	st, err := m.reg.StartMonitor(task.MonitorSpec{Description: w.Description, ToolUseID: w.ToolUseID, Filter: w.Filter,
		Detail: task.Monitor{Source: prtool.Source, Target: w.Target, AgentID: m.agentID},
		Lines: func(ctx context.Context, emit func(string) bool) (task.SourceEnd, error) {
			note, err := w.Lines(ctx, emit)
			return task.SourceEnd{Note: note}, err
		}})
	return string(st.ID), err
}

// Watching implements prtool.Monitors: the agent's running monitors of
// pull requests.
func (m prMonitors) Watching() []prtool.Running {
	var out []prtool.Running
	for _, s := range m.reg.List() {
		d, ok := s.Detail.(*task.Monitor)
		if !ok || s.Type != task.MonitorMCP || s.Status.Terminal() || d.Source != prtool.Source || d.AgentID != m.agentID {
			continue
		}
		out = append(out, prtool.Running{ID: string(s.ID), Target: d.Target})
	}
	return out
}

// StopWatch implements prtool.Monitors.
func (m prMonitors) StopWatch(ctx context.Context, id string) error {
	_, err := m.reg.Stop(ctx, task.ID(id))
	return err
}
