package swarm

import (
	"context"
	"errors"
	"fmt"

	"github.com/troupe-dev/troupe/task"
)

// Teammates are tasks: with LeadConfig.Registry set, every teammate the
// lead starts, in-process or in a pane, is an in_process_teammate task
// ("t" id) with its identity and whether it is idle, so that TaskStop
// stops it, the stream-json output carries its task events and front ends
// list it with the other background work. Its end is reported by the
// team (has shut down, died), so the task ends without a notification of
// its own for the model.

// registerMate registers m as a running task; its kill stops it.
func (l *Lead) registerMate(teamName string, m *mate, prompt string) {
	reg := l.cfg.Registry
	if reg == nil {
		return
	}
	st, err := reg.Register(task.State{Type: task.InProcessTeammate, Status: task.Running,
		Description: "teammate " + m.info.Name,
		Detail:      &task.Teammate{AgentID: m.info.AgentID, AgentName: m.info.Name, TeamName: teamName, Prompt: prompt, Model: m.info.Model, Color: m.info.Color}},
		func(ctx context.Context, _ task.State) error { return l.stopMate(ctx, teamName, m) })
	if err != nil {
		l.cfg.Log.Warn("register a teammate as a task", "agent", m.info.Name, "err", err)
		return
	}
	l.mu.Lock()
	m.task = st.ID
	l.mu.Unlock()
}

// stopMate is a teammate task's kill (TaskStop): the teammate ends as the
// lead intends, leaves the team and its tasks go back to the list.
func (l *Lead) stopMate(ctx context.Context, teamName string, m *mate) error {
	l.mu.Lock()
	m.expected = true
	m.clearShutdown()
	l.ending++
	l.mu.Unlock()
	defer l.endWork()
	if m.h != nil {
		if err := m.h.Kill(ctx); err != nil {
			return fmt.Errorf("stop teammate %s: %w", m.info.Name, err)
		}
	}
	l.shutMu.Lock()
	defer l.shutMu.Unlock()
	released := l.removeMate(context.WithoutCancel(ctx), teamName, m.info.Name)
	l.event(m.info.Name, EventExit, m.info.Name+" was stopped"+releasedNote(released))
	return nil
}

// mateIdle records in the teammate's task whether it is idle.
func (l *Lead) mateIdle(name string, idle bool) {
	l.updateMate(name, func(d *task.Teammate) { d.Idle = idle })
}

// updateMate changes the detail of teammate name's task, if it has one.
func (l *Lead) updateMate(name string, f func(*task.Teammate)) {
	l.mu.Lock()
	m := l.mates[name]
	var id task.ID
	if m != nil {
		id = m.task
	}
	l.mu.Unlock()
	if id == "" || l.cfg.Registry == nil {
		return
	}
	_, _ = l.cfg.Registry.Update(id, func(s task.State) task.State {
		if d, ok := s.Detail.(*task.Teammate); ok {
			c := *d
			f(&c)
			s.Detail = &c
		}
		return s
	})
}

// endMateTask ends the teammate's task with status to. A task already
// ended (stopped with TaskStop) is left alone.
func (l *Lead) endMateTask(m *mate, to task.Status) {
	l.mu.Lock()
	id := m.task
	l.mu.Unlock()
	if id == "" || l.cfg.Registry == nil {
		return
	}
	if _, err := l.cfg.Registry.FinishQuietly(id, to, nil); err != nil && !errors.Is(err, task.ErrTerminal) && !errors.Is(err, task.ErrNotFound) {
		l.cfg.Log.Warn("end a teammate's task", "agent", m.info.Name, "err", err)
	}
}

// MateProgress records what an in-process teammate has done in its task:
// tokens and tool uses, and its last activities in plain words.
func (l *Lead) MateProgress(name string, u task.Usage, recent []string) {
	l.updateMate(name, func(d *task.Teammate) { d.Usage, d.Recent = u, recent })
}

// Activity says in plain words what a tool call does: "Reading a.go",
// "Running go test ./...".
func Activity(tool, input string) string {
	verb := map[string]string{"Read": "Reading", "Write": "Writing", "Edit": "Editing", "MultiEdit": "Editing", "NotebookEdit": "Editing",
		"Bash": "Running", "Grep": "Searching for", "Glob": "Listing", "WebFetch": "Fetching", "WebSearch": "Searching the web for",
		"SendMessage": "Messaging", "TaskUpdate": "Updating task", "TaskCreate": "Creating a task:", "TaskList": "Listing the tasks",
		"Agent": "Starting a sub-agent:", "Skill": "Loading the skill", "AskUserQuestion": "Asking the person:"}[tool]
	if verb == "" {
		verb = "Using " + tool
	}
	if input == "" {
		return verb
	}
	return verb + " " + firstLine(input, 80)
}
