package kit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/permission/settings"
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
	cfg.Monitors = &prMonitors{reg: reg, agentID: agentID, ended: map[string]chan struct{}{}}
	return prtool.Tools(cfg)
}

// prMonitors are an agent's pull-request monitors on a task registry.
type prMonitors struct {
	reg     *task.Registry
	agentID string
	mu      sync.Mutex
	ended   map[string]chan struct{} // closed when a monitor's polling has stopped
}

// StartWatch implements prtool.Monitors.
func (m *prMonitors) StartWatch(w prtool.Watch) (string, error) {
	ended := make(chan struct{})
	st, err := m.reg.StartMonitor(task.MonitorSpec{Description: w.Description, ToolUseID: w.ToolUseID, Filter: w.Filter,
		Detail: task.Monitor{Source: prtool.Source, Target: w.Target, AgentID: m.agentID},
		Lines: func(ctx context.Context, emit func(string) bool) (task.SourceEnd, error) {
			defer close(ended)
			note, err := w.Lines(ctx, emit)
			return task.SourceEnd{Note: note}, err
		}})
	if err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, ch := range m.ended { // forget the monitors that ended
		select {
		case <-ch:
			delete(m.ended, id)
		default:
		}
	}
	m.ended[string(st.ID)] = ended
	return string(st.ID), nil
}

// Watching implements prtool.Monitors: the agent's running monitors of
// pull requests.
func (m *prMonitors) Watching() []prtool.Running {
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

// StopWatch implements prtool.Monitors: it returns once the monitor's
// polling has stopped (a request in flight is abandoned), so that no
// request reaches GitHub after it.
func (m *prMonitors) StopWatch(ctx context.Context, id string) error {
	if _, err := m.reg.Stop(ctx, task.ID(id)); err != nil {
		return err
	}
	m.mu.Lock()
	ended, ok := m.ended[id]
	delete(m.ended, id)
	m.mu.Unlock()
	if !ok {
		return nil
	}
	select {
	case <-ended:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// prConfig returns the pull-request tools' configuration of o: o.GitHub,
// its unset fields taken from o.Context (the prActivity setting's
// interval, GITHUB_API_URL, the token through the run's environment).
func prConfig(o ToolOptions) prtool.Config {
	cfg := o.GitHub
	if o.Context == nil {
		return cfg
	}
	if cfg.Interval == 0 {
		cfg.Interval = o.Context.prInterval
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = o.Context.getenv("GITHUB_API_URL")
	}
	if cfg.Token == nil {
		cfg.Token = prtool.TokenFrom(o.Context.getenv)
	}
	return cfg
}

// prActivitySetting is the settings' "prActivity" key.
type prActivitySetting struct {
	IntervalSeconds int `json:"intervalSeconds"`
}

// prInterval returns prActivity.intervalSeconds of the settings of
// troupeHome and cwd as a duration (0 when unset: prtool's default). A
// bad value is warned about and ignored.
func prInterval(troupeHome, cwd string, warn func(string)) time.Duration {
	v, file, err := settings.Key[prActivitySetting](settings.Files(troupeHome, cwd), "prActivity")
	if err != nil {
		warn(err.Error())
		return 0
	}
	if v.IntervalSeconds == 0 {
		return 0
	}
	if min := int(prtool.MinInterval / time.Second); v.IntervalSeconds < min {
		warn(fmt.Sprintf("%s: prActivity.intervalSeconds %d: want at least %d; subscribe_pr_activity polls every %v by default", file, v.IntervalSeconds, min, prtool.DefaultInterval))
		return 0
	}
	return time.Duration(v.IntervalSeconds) * time.Second
}
