package task

// Owner returns the agent that started s, for a shell or a monitor that a
// sub-agent started (its AgentID); "" for the registry's own agent and for
// the other task types. A notification of such a task is for that agent
// while it runs.
func Owner(s State) string {
	switch d := s.Detail.(type) {
	case *Shell:
		return d.AgentID
	case *Monitor:
		return d.AgentID
	}
	return ""
}
