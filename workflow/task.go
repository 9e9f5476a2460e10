package workflow

import (
	"context"
	"errors"
	"time"

	"github.com/troupe-dev/troupe/task"
)

// Agent states in a task's detail.
const (
	StatePending = "pending"
	StateRunning = "running"
	StateDone    = "done"
	StateFailed  = "failed"
)

// StartTask runs j as a local_workflow task of reg (a `w` id) and returns
// its state at once. The task's detail follows the run (phases with their
// agents' counts, each agent with its label, state, tokens and last
// activity); its output file is the run's output.log; TaskStop (Stop)
// cancels the run, which stops every agent it started, and waits for
// them. Its end notifies the model with the (capped) return value.
func StartTask(reg *task.Registry, j *Job, description, toolUseID string) (task.State, error) {
	m := j.l.Script.Meta
	if description == "" {
		description = m.Name
	}
	d := &task.Workflow{Name: m.Name, RunID: j.ID, Dir: j.Dir.Path}
	for _, p := range m.Phases {
		d.Phases = append(d.Phases, task.WorkflowPhase{Title: p.Title})
	}
	now := j.l.Now
	st := task.State{Type: task.LocalWorkflow, Description: description, ToolUseID: toolUseID,
		OutputFile: j.Dir.OutputPath(), Detail: d}
	prev := j.l.OnEvent
	return reg.Go(st, func(ctx context.Context, id task.ID) task.Outcome {
		j.l.OnEvent = func(e Event) {
			reg.Update(id, func(s task.State) task.State {
				if w, ok := s.Detail.(*task.Workflow); ok {
					s.Detail = Apply(w, e, now())
				}
				return s
			})
			if prev != nil {
				prev(e)
			}
		}
		info, res, err := j.Run(ctx)
		status := task.Completed
		switch {
		case err == nil:
		case ctx.Err() != nil && errors.Is(context.Cause(ctx), task.ErrStopped):
			status = task.Killed
		default:
			status = task.Failed
		}
		return task.Outcome{Status: status, Record: func(s task.State) task.State {
			if w, ok := s.Detail.(*task.Workflow); ok {
				s.Detail = w.With(func(c *task.Workflow) {
					c.Error = info.Error
					if err == nil {
						c.Result = string(res.Value)
					}
					c.Usage = task.Usage{TotalTokens: res.Usage.Total(), ToolUses: res.Usage.ToolUses, Duration: info.Ended.Sub(info.Started)}
				})
			}
			return s
		}}
	})
}

// Apply returns w with e taken into account: the agent's row and the
// phase counts. It is a pure function; w is not changed.
func Apply(w *task.Workflow, e Event, now time.Time) *task.Workflow {
	switch e.Kind {
	case EventPhase:
		return w.With(func(c *task.Workflow) {
			c.Phase = e.Phase
			ensurePhase(c, e.Phase)
		})
	case EventQueued, EventStarted, EventActivity, EventDone, EventFailed:
	default:
		return w
	}
	return w.With(func(c *task.Workflow) {
		i := -1
		for k := range c.Agents {
			if c.Agents[k].Index == e.Index {
				i = k
				break
			}
		}
		if i < 0 {
			c.Agents = append(c.Agents, task.WorkflowAgent{Index: e.Index, Label: e.Label, Phase: e.Phase, State: StatePending})
			i = len(c.Agents) - 1
		}
		a := &c.Agents[i]
		a.At = now
		switch e.Kind {
		case EventQueued:
			a.Cached = e.Cached
		case EventStarted:
			a.State = StateRunning
		case EventActivity:
			a.Activity, a.Tokens = e.Text, e.Tokens
			if e.AgentID != "" {
				a.AgentID = e.AgentID
			}
		case EventDone:
			a.State, a.Tokens = StateDone, e.Usage.Total()
		case EventFailed:
			a.State, a.Activity = StateFailed, e.Err
			if t := e.Usage.Total(); t > 0 {
				a.Tokens = t
			}
		}
		if a.Phase != "" {
			ensurePhase(c, a.Phase)
		}
		tally(c)
	})
}

func ensurePhase(c *task.Workflow, title string) {
	if title == "" {
		return
	}
	for _, p := range c.Phases {
		if p.Title == title {
			return
		}
	}
	c.Phases = append(c.Phases, task.WorkflowPhase{Title: title})
}

// tally recounts the phases' agents.
func tally(c *task.Workflow) {
	for k := range c.Phases {
		p := &c.Phases[k]
		p.Pending, p.Running, p.Done, p.Failed = 0, 0, 0, 0
		for _, a := range c.Agents {
			if a.Phase != p.Title {
				continue
			}
			switch a.State {
			case StatePending:
				p.Pending++
			case StateRunning:
				p.Running++
			case StateDone:
				p.Done++
			case StateFailed:
				p.Failed++
			}
		}
	}
}
