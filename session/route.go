package session

import "github.com/troupe-dev/troupe/task"

// Router hands a notification to the running sub-agent agentID (the Agent
// tool's Send); false when it is not running, and the lead gets it.
type Router func(agentID, text string) bool

// SetRouter makes the notifications of tasks a sub-agent started (its
// background shells, task.Owner) go to that sub-agent while it runs, a
// coordinator's worker among them, instead of to the lead.
func (s *Session) SetRouter(r Router) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.router = r
}

// route hands e's notification to the sub-agent that owns its task, and
// reports whether it did.
func (s *Session) route(e task.Event, text string) bool {
	owner := task.Owner(e.State)
	if owner == "" {
		return false
	}
	s.mu.Lock()
	r := s.router
	s.mu.Unlock()
	return r != nil && r(owner, text)
}
